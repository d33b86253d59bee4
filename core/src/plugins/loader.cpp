// The plugin loader (abi.1-5, abi.20-22).
//
// Decisions of our own (docs/spec/plugin-abi.md says what the loader must do):
//  - A plugin is refused with ONE line, "cannot load plugin <file>: <reason>", thrown as
//    nucleo::Error kPlugin; the command prints it and exits 2.
//  - Loading the same canonical file twice in one process returns the same library while it is
//    alive (init runs once); when the last Plugin and instance are gone, deinit runs and the
//    library is unloaded, and a later load starts over.
//  - entry->init and entry->deinit may be NULL (nothing to set up); name and get_factory may not.
//  - A plugin built for a newer minor loads: the host reads only the slots it knows, each only
//    within the plugin's struct_size.
//  - The installed plugin folder is found relative to libnucleo first (<libdir>/nucleo/plugins,
//    so an installed tree can be moved), then at the prefix compiled in.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>

#include "common/log_internal.hpp"
#include "nucleo/errors.hpp"
#include "plugins/isolated.hpp"
#include "plugins/library.hpp"

namespace nucleo {
namespace fs = std::filesystem;
using plugins_detail::Library;

namespace {

// Sizes of the v1.0 structs: a plugin's struct must reach at least this far. Spelled as offsets
// so they stay the v1.0 sizes when later minors append slots.
constexpr std::size_t kEntryV1Size =
    offsetof(nucleo_plugin_entry, get_factory) + sizeof(nucleo_plugin_entry::get_factory);
constexpr std::size_t kEntryMajorSize =
    offsetof(nucleo_plugin_entry, abi_major) + sizeof(nucleo_plugin_entry::abi_major);

[[noreturn]] void refuse(const fs::path& file, const std::string& reason) {
    throw Error(ErrorKind::kPlugin, "cannot load plugin " + file.string() + ": " + reason);
}

/// One line: dlerror() texts may carry newlines from the linker.
std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

bool has_elf_header(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    char magic[4] = {};
    in.read(magic, sizeof magic);
    return in.gcount() == 4 && std::memcmp(magic,
                                           "\x7f"
                                           "ELF",
                                           4) == 0;
}

std::map<std::string, std::weak_ptr<Library>>& live_libraries() {
    static std::map<std::string, std::weak_ptr<Library>> live;
    return live;
}

/// The <name> of a file named nucleo-<name>.so, else empty.
std::string plugin_name_of(const fs::path& file) {
    const std::string fname = file.filename().string();
    if (fname.size() <= 10 || fname.rfind("nucleo-", 0) != 0 || fname.compare(fname.size() - 3, 3, ".so") != 0)
        return {};
    return fname.substr(7, fname.size() - 10);
}

std::shared_ptr<Library> open_library(const fs::path& requested) {
    std::error_code ec;
    if (!fs::exists(requested, ec)) refuse(requested, "no such file");
    if (!fs::is_regular_file(requested, ec)) refuse(requested, "not a regular file");
    const fs::path file = fs::canonical(requested, ec);
    if (ec) refuse(requested, "cannot resolve the path (" + ec.message() + ")");

    // Serialises init/deinit across all plugins and makes load-or-reuse atomic.
    std::lock_guard<std::recursive_mutex> lock(plugins_detail::lifecycle_mutex());
    auto& live = live_libraries();
    if (auto it = live.find(file.string()); it != live.end()) {
        if (auto existing = it->second.lock()) {
            const std::string expected = plugin_name_of(requested);
            if (expected.empty() || expected == existing->info.name) return existing;
            refuse(file, "its entry names the plugin '" + existing->info.name + "', but the file is " +
                             requested.filename().string() + " (plugin '" + expected + "')");
        }
    }

    auto lib = std::make_shared<Library>();
    boost::dll::fs::error_code load_error;
    ::dlerror();  // clear a stale message so the one read below belongs to this load
    lib->library.load(boost::dll::fs::path(file.string()), load_error,
                      boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    if (load_error || !lib->library.is_loaded()) {
        const char* why = ::dlerror();
        if (!has_elf_header(file)) refuse(file, "not a shared object (no ELF header)");
        refuse(file, "not a loadable shared object (" +
                         one_line(why != nullptr ? why : load_error.message()) + ")");
    }
    if (!lib->library.has(NUCLEO_PLUGIN_ENTRY_SYMBOL)) {
        refuse(file, "missing entry symbol " NUCLEO_PLUGIN_ENTRY_SYMBOL
                     " (not a Nucleo plugin, or built for another ABI major)");
    }
    auto entry_fn = lib->library.get<const nucleo_plugin_entry*()>(NUCLEO_PLUGIN_ENTRY_SYMBOL);
    const nucleo_plugin_entry* entry = entry_fn();
    if (entry == nullptr) refuse(file, NUCLEO_PLUGIN_ENTRY_SYMBOL "() returned NULL");
    if (entry->struct_size < kEntryMajorSize) {
        refuse(file, "entry struct too small (struct_size " + std::to_string(entry->struct_size) +
                         ", the ABI version fields need " + std::to_string(kEntryMajorSize) + ")");
    }
    if (entry->abi_major != NUCLEO_PLUGIN_ABI_MAJOR) {
        refuse(file, "wrong ABI major " + std::to_string(entry->abi_major) + " (this host speaks " +
                         std::to_string(NUCLEO_PLUGIN_ABI_MAJOR) + ")");
    }
    if (entry->struct_size < kEntryV1Size) {
        refuse(file, "entry struct too small (struct_size " + std::to_string(entry->struct_size) +
                         ", ABI 1.0 needs " + std::to_string(kEntryV1Size) + ")");
    }
    if (entry->name == nullptr || entry->name[0] == '\0') refuse(file, "entry has no name");
    if (entry->get_factory == nullptr) refuse(file, "entry has no get_factory slot");
    // abi.103: a file named nucleo-<name>.so serves the plugin <name> and no other, so that
    // `plugin: anthropic` never runs a library whose entry says it is something else. Checked
    // before init: a mismatched library runs none of its code but its entry function.
    if (const std::string expected = plugin_name_of(requested); !expected.empty() && expected != entry->name) {
        refuse(file, "its entry names the plugin '" + one_line(entry->name) + "', but the file is " +
                         requested.filename().string() + " (plugin '" + expected +
                         "'): a plugin's entry name must equal the <name> of its file nucleo-<name>.so");
    }

    lib->entry = entry;
    lib->info.name = entry->name;
    lib->info.version = entry->version != nullptr ? entry->version : "";
    lib->info.description = entry->description != nullptr ? entry->description : "";
    lib->info.abi_major = entry->abi_major;
    lib->info.abi_minor = entry->abi_minor;
    lib->info.file = file;
    lib->logger = "plugin:" + lib->info.name;
    lib->host = plugins_detail::make_host(lib.get());
    std::weak_ptr<Library>& slot = live[file.string()];

    if (entry->init != nullptr) {
        nucleo_error err;
        nucleo_error_init(&err);
        const int32_t status = entry->init(&lib->host, &err);
        if (status != NUCLEO_OK) {
            err.message[sizeof err.message - 1] = '\0';
            refuse(file, "init failed with status " + std::to_string(status) +
                             (err.message[0] != '\0' ? ": " + one_line(err.message) : ""));
        }
    }
    lib->initialised = true;
    slot = lib;

    for (const char* id :
         {NUCLEO_FACTORY_PROVIDER, NUCLEO_FACTORY_STORE, NUCLEO_FACTORY_SUMMARIZER}) {
        if (entry->get_factory(id) != nullptr) lib->info.factories.emplace_back(id);
    }
    NUCLEO_LOG_DEBUG("loaded plugin {} {} from {}", lib->info.name, lib->info.version,
                     file.string());
    return lib;
}

std::vector<fs::path> split_path_list(const char* list) {
    std::vector<fs::path> out;
    if (list == nullptr) return out;
    std::string_view rest(list);
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const auto item = rest.substr(0, colon);
        if (!item.empty()) out.emplace_back(std::string(item));
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return out;
}

bool same_dir(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec) && !ec;
}

std::string file_name_for(std::string_view name) {
    return "nucleo-" + std::string(name) + ".so";
}

bool looks_like_path(std::string_view s) {
    return s.find('/') != std::string_view::npos ||
           (s.size() > 3 && s.substr(s.size() - 3) == ".so");
}

}  // namespace

namespace plugins_detail {

Library::~Library() {
    if (!initialised || entry == nullptr || entry->deinit == nullptr) return;
    std::lock_guard<std::recursive_mutex> lock(lifecycle_mutex());
    entry->deinit();
}

const void* Library::factory(const char* id, std::size_t min_size) const {
    const void* f = entry->get_factory(id);
    if (f == nullptr) {
        refuse(info.file, "plugin '" + info.name + "' does not serve factory " + id);
    }
    // Every factory struct begins with uint32_t struct_size (plugin.h).
    const uint32_t size = *static_cast<const uint32_t*>(f);
    if (size < min_size) {
        refuse(info.file, std::string("factory ") + id + " struct too small (struct_size " +
                              std::to_string(size) + ", ABI 1.0 needs " + std::to_string(min_size) +
                              ")");
    }
    return f;
}

}  // namespace plugins_detail

PluginLoader::PluginLoader(std::vector<fs::path> paths) : paths_(std::move(paths)) {}

std::vector<fs::path> PluginLoader::search_path() const {
    // abi.104: the configured paths, then the installed plugins, then NUCLEO_PLUGIN_PATH; an
    // environment variable cannot shadow an installed plugin. An operator who wants a folder
    // searched first lists it in the configured paths (nucleo.yaml `plugins.paths`).
    std::vector<fs::path> out = paths_;
    boost::dll::fs::error_code ec;
    const fs::path self_dir = fs::path(boost::dll::this_line_location(ec).string()).parent_path();
    // abi.113: an installed libnucleo finds its plugins beside itself (<libdir>/nucleo/plugins),
    // so an install moved or copied to another prefix loads its own; the prefix compiled in is
    // searched only when that folder does not exist (a libnucleo linked statically into a
    // program, whose own folder is the program's).
    bool beside = false;
    if (!ec && same_dir(self_dir, NUCLEO_BUILD_TREE_LIB_DIR)) {
        out.emplace_back(NUCLEO_BUILD_TREE_PLUGIN_DIR);
    } else if (!ec) {
        out.push_back(self_dir / "nucleo" / "plugins");
        std::error_code exists_ec;
        beside = fs::is_directory(out.back(), exists_ec);
    }
    const fs::path installed(NUCLEO_INSTALLED_PLUGIN_DIR);
    if (!beside &&
        std::none_of(out.begin(), out.end(), [&](const fs::path& p) { return p == installed; })) {
        out.push_back(installed);
    }
    for (auto& p : split_path_list(std::getenv("NUCLEO_PLUGIN_PATH"))) out.push_back(std::move(p));
    return out;
}

std::vector<fs::path> PluginLoader::discover() const {
    std::vector<fs::path> found;
    std::set<std::string> names;
    for (const auto& dir : search_path()) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) continue;
        std::vector<fs::path> here;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const std::string fname = e.path().filename().string();
            if (fname.size() > 10 && fname.rfind("nucleo-", 0) == 0 &&
                fname.compare(fname.size() - 3, 3, ".so") == 0) {
                here.push_back(e.path());
            }
        }
        std::sort(here.begin(), here.end());
        for (auto& p : here) {
            if (names.insert(p.filename().string()).second) found.push_back(std::move(p));
        }
    }
    return found;
}

fs::path PluginLoader::locate(std::string_view name_or_path) const {
    if (name_or_path.empty()) throw Error(ErrorKind::kPlugin, "cannot load plugin: empty name");
    if (looks_like_path(name_or_path)) return fs::path(name_or_path);
    const std::string fname = file_name_for(name_or_path);
    std::string searched;
    for (const auto& dir : search_path()) {
        std::error_code ec;
        if (fs::exists(dir / fname, ec)) return dir / fname;
        searched += (searched.empty() ? "" : ":") + dir.string();
    }
    throw Error(ErrorKind::kPlugin, "cannot load plugin '" + std::string(name_or_path) + "': no " +
                                        fname + " in " + searched);
}

Plugin PluginLoader::load(std::string_view name_or_path) const {
    return Plugin(open_library(locate(name_or_path)));
}

Plugin PluginLoader::load_isolated(std::string_view name_or_path,
                                   std::chrono::milliseconds deadline,
                                   std::string deadline_key) const {
    const fs::path requested = locate(name_or_path);
    std::error_code ec;
    if (!fs::exists(requested, ec)) refuse(requested, "no such file");
    // abi.130: the file is opened by the helper only; this process maps none of its code.
    auto lib = std::make_shared<Library>();
    lib->isolation = plugins_detail::HelperDeadline{deadline, std::move(deadline_key)};
    auto hello = plugins_detail::start_helper(fs::absolute(requested), *lib->isolation, lib->spare);
    lib->info = std::move(hello.info);
    lib->schemas = std::move(hello.schemas);
    lib->logger = "plugin:" + lib->info.name;
    return Plugin(std::move(lib));
}

Plugin::Plugin(std::shared_ptr<Library> library) : library_(std::move(library)) {}

const PluginInfo& Plugin::info() const {
    return library_->info;
}

bool Plugin::serves(std::string_view factory_id) const {
    if (library_->entry == nullptr)  // served by a helper (abi.130): as it reported
        return std::find(library_->info.factories.begin(), library_->info.factories.end(),
                         factory_id) != library_->info.factories.end();
    return library_->entry->get_factory(std::string(factory_id).c_str()) != nullptr;
}

bool Plugin::isolated() const {
    return library_->isolation.has_value();
}

namespace plugins_detail {

fs::path plugin_host_executable() {
    boost::dll::fs::error_code ec;
    const fs::path self_dir = fs::path(boost::dll::this_line_location(ec).string()).parent_path();
    if (!ec && same_dir(self_dir, NUCLEO_BUILD_TREE_LIB_DIR)) return self_dir / "nucleo-plugin-host";
    // abi.113's rule for plugins: beside the installed libnucleo, else at the prefix compiled in.
    fs::path beside = self_dir / "nucleo" / "nucleo-plugin-host";
    std::error_code exists_ec;
    if (!ec && fs::exists(beside, exists_ec)) return beside;
    return fs::path(NUCLEO_INSTALLED_PLUGIN_DIR).parent_path() / "nucleo-plugin-host";
}

}  // namespace plugins_detail

}  // namespace nucleo
