// host_app PLUGIN REQUEST_JSON: loads PLUGIN (a name on the search path or a file), makes a
// summarizer and prints its answer on stdout. Exit 0, or 1 with the error on stderr.
#include <iostream>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/version.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: host_app PLUGIN REQUEST_JSON\n";
        return 2;
    }
    try {
        const nucleo::Plugin plugin = nucleo::PluginLoader().load(argv[1]);
        std::cout << "nucleo " << nucleo::version() << " loaded " << plugin.info().name << "\n";
        std::cout << plugin.make_summarizer().summarize(argv[2]) << "\n";
        return 0;
    } catch (const nucleo::Error& e) {
        std::cerr << "host_app: " << e.what() << "\n";
        return 1;
    }
}
