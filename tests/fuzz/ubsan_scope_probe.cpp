// The probe of tests/fuzz/ubsan_scope_test.sh (limits.130), compiled with clang's UBSan.
// `json`: reads a document through the guarded JSON parse and writes it back with rapidjson's
// Writer, touching every rapidjson stack (Reader, Document, Writer, StringBuffer) from empty.
// `own`: adds a non-zero offset to a null pointer in this file, which UBSan must still report.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "nucleo/wire/json_guard.hpp"

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "json") == 0) {
        rapidjson::Document doc;
        if (nucleo::json_guard::parse(doc, R"({"messages":[{"role":"user","content":[1,2.5,"x"]}]})"))
            return 2;
        rapidjson::StringBuffer out;
        rapidjson::Writer<rapidjson::StringBuffer> writer(out);
        doc.Accept(writer);
        std::puts(out.GetString());
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "own") == 0) {
        char* volatile base = nullptr;
        const char* moved = base + static_cast<std::size_t>(argc);
        std::printf("%p\n", static_cast<const void*>(moved));
        return 0;
    }
    std::fputs("usage: ubsan_scope_probe json|own\n", stderr);
    return 2;
}
