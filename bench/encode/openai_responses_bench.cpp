// Encode benchmark of nucleo-openai-responses: the 2,000-message conversation of the OpenAI
// program (orders_conversation.hpp) encoded through the ABI by nucleo-openai-responses and, in the
// same run, by nucleo-openai; target: the Responses encode within 1.5× of the Chat Completions
// dialect's. Also the Responses encode against rapidjson's Writer writing the same body from a
// ready DOM (bench/RESULTS.md).
#include "against_chat.hpp"
#include "ratio_main.hpp"

namespace {

void BM_ResponsesEncode2000(benchmark::State& state) {
    nucleo::bench::encode2000(state, "openai-responses");
}
BENCHMARK(BM_ResponsesEncode2000)->Unit(benchmark::kMicrosecond);

void BM_OpenAiEncode2000(benchmark::State& state) {
    nucleo::bench::encode2000(state, "openai");
}
BENCHMARK(BM_OpenAiEncode2000)->Unit(benchmark::kMicrosecond);

void BM_RapidJsonWriterSameResponsesBody(benchmark::State& state) {
    nucleo::bench::writer_same_body(state, "openai-responses");
}
BENCHMARK(BM_RapidJsonWriterSameResponsesBody)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    return nucleo::bench::run_with_ratios(
        argc, argv, {{"BM_ResponsesEncode2000", "BM_RapidJsonWriterSameResponsesBody"}},
        {{"BM_ResponsesEncode2000", "BM_OpenAiEncode2000", 1.5}});
}
