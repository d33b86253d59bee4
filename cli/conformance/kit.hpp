// The plugin conformance kit behind `nucleo plugin check` (abi.120-abi.127): batteries of cases run
// against one plugin library loaded straight through the C ABI (dlopen, its one entry symbol,
// init), so what is checked is what the plugin itself does, not what the host's wrappers make of
// it. The kit never decides how a case is isolated: the command runs a Battery in a child process
// and reports a crash or a hang of any case as that case's finding (abi.121).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nucleo::conformance {

/// One thing the plugin did not do as the ABI or its wire says (abi.122): the slot called, the
/// case, what was expected and what came back, each one line.
struct Finding {
    std::string slot;
    std::string case_name;
    std::string expected;
    std::string got;
    /// abi.131: the corpus file (and entry) the case came from, relative to the corpus folder;
    /// "" for a case the kit makes itself.
    std::string source;
};

/// The plugin cannot be checked at all: not a plugin, another ABI major, init refused or absent
/// entry. One line naming the file and the reason; the command exits 2 (abi.123).
class BadPlugin : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Options {
    std::filesystem::path plugin;  ///< the shared object to check
    std::string family;            ///< --family: overrides the capabilities' wire_family
    std::filesystem::path corpus;  ///< the corpus folder (encode/, decode/)
    /// The create() config of a store (a database URL, a file). Empty: the kit chooses (abi.131):
    /// a store whose options schema has a "path" gets a database file in `scratch`, any other {}.
    std::string store_config;
    /// A folder the kit may write to for this run (the store's temporary database); the command
    /// makes it and removes it afterwards.
    std::filesystem::path scratch;
    /// When set, the body of every corpus request encode gave is written to <dir>/<case>.json,
    /// for a check of its own (the published schemas, in the test suite).
    std::filesystem::path save_requests;
};

/// The corpus installed with the package: <bindir>/../share/nucleo/conformance, else the source
/// tree's copy when running from the build tree. Throws BadPlugin-free std::runtime_error when
/// neither exists.
std::filesystem::path default_corpus_dir(const std::filesystem::path& executable_dir);

/// The cases of one plugin, in a fixed order that depends only on the factories it serves and
/// the corpus, so a child restarted after a crash finds the same case at the same index.
class Battery {
public:
    /// Loads and initialises the plugin; throws BadPlugin.
    explicit Battery(Options options);
    ~Battery();
    Battery(const Battery&) = delete;
    Battery& operator=(const Battery&) = delete;

    [[nodiscard]] std::size_t size() const noexcept;
    [[nodiscard]] const std::string& slot(std::size_t index) const;
    [[nodiscard]] const std::string& name(std::size_t index) const;
    /// False when case `index` does not apply (a documented answer of another wire family).
    [[nodiscard]] bool applies(std::size_t index);
    /// Runs case `index`; its findings (none: it passed).
    std::vector<Finding> run(std::size_t index);

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace nucleo::conformance
