// nucleo-plugin-host: the helper process of a plugin instance with `isolation: process`
// (abi.130). Started by libnucleo as `nucleo-plugin-host PLUGIN.so` with its channel on
// descriptor 3 (frames.hpp), it loads the plugin with the ordinary loader, says hello (the
// plugin's info and options schemas), creates one instance (a provider or a summarizer; the
// summarizer gets no model-call service here) and serves its slots through the
// ordinary C++ wrappers, so an error reads exactly as it would in process. A crash or a hang here
// is the core's to report; this process never outlives the core that started it.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "nucleo/errors.hpp"
#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"
#include "plugins/frames.hpp"
#include "plugins/sinks.hpp"

namespace {

using nucleo::plugins_detail::Frame;
constexpr int kChannel = 3;

std::string flag(bool b) {
    return b ? "1" : "0";
}

Frame hello(const nucleo::Plugin& plugin) {
    const auto& info = plugin.info();
    Frame f{"hello",
            info.name,
            info.version,
            info.description,
            std::to_string(info.abi_major),
            std::to_string(info.abi_minor),
            info.file.string()};
    for (const auto& id : info.factories) {
        const auto schema = plugin.options_schema(id);
        f.insert(f.end(), {id, flag(schema.has_value()), schema.value_or("")});
    }
    return f;
}

/// One provider slot: its outputs, in order.
Frame serve(const nucleo::ProviderInstance& p, const std::string& slot, const Frame& a) {
    const auto arg = [&](std::size_t i) -> const std::string& {
        static const std::string none;
        return i < a.size() ? a[i] : none;
    };
    if (slot == "capabilities") return {p.capabilities()};
    if (slot == "encode") return {p.encode(arg(0))};
    if (slot == "decode")
        return {p.decode(static_cast<int32_t>(std::strtol(arg(0).c_str(), nullptr, 10)), arg(1),
                         arg(2))};
    if (slot == "decode_event") return {p.decode_event(arg(0), arg(1))};
    if (slot == "encode_parts") {
        auto parts = p.encode_parts(arg(0));
        return {std::move(parts.head), std::move(parts.body)};
    }
    if (slot == "encode_split") {
        auto s = p.encode_split(arg(0));
        return {std::move(s.head), std::move(s.open), std::move(s.turns), std::move(s.close)};
    }
    throw nucleo::Error(nucleo::ErrorKind::kInternal, "the plugin helper has no slot " + slot);
}

Frame error_reply(nucleo::ErrorKind kind, const std::string& text) {
    return {"error", std::to_string(static_cast<int>(kind)), text};
}

}  // namespace

int main(int argc, char** argv) {
    // Never outlive the core, even hung in a plugin: the core's end of the channel closing (the
    // core gone, or done with this instance) ends this process. A watch on the channel, not
    // PR_SET_PDEATHSIG, which fires when the core's THREAD that started the helper ends.
    std::thread([] {
        pollfd p{kChannel, POLLRDHUP, 0};
        while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
        std::_Exit(0);
    }).detach();
    // A crash is reported by the core, not dumped.
    rlimit core{};
    (void)::setrlimit(RLIMIT_CORE, &core);
    ::signal(SIGPIPE, SIG_IGN);
    if (argc != 2) {
        std::cerr
            << "nucleo-plugin-host: started by libnucleo for one plugin instance with "
               "`isolation: process` (usage: nucleo-plugin-host PLUGIN.so, channel on fd 3)\n";
        return 2;
    }
    std::optional<nucleo::Plugin> plugin;
    try {
        plugin.emplace(nucleo::PluginLoader().load(argv[1]));
    } catch (const std::exception& e) {
        nucleo::plugins_detail::write_frame(kChannel, {"refused", e.what()});
        return 2;
    }
    if (!nucleo::plugins_detail::write_frame(kChannel, hello(*plugin))) return 1;

    std::optional<nucleo::ProviderInstance> provider;
    std::optional<nucleo::SummarizerInstance> summarizer;
    while (auto request = nucleo::plugins_detail::read_frame(kChannel)) {
        Frame reply;
        try {
            const Frame& r = *request;
            if (r.size() >= 3 && r[0] == "create" && r[1] == NUCLEO_FACTORY_SUMMARIZER) {
                summarizer.emplace(plugin->make_summarizer(r[2]));
                reply = {"ok"};
            } else if (r.size() >= 3 && r[0] == "create") {
                if (r[1] != NUCLEO_FACTORY_PROVIDER)
                    throw nucleo::NotImplementedException(
                        "isolation: process serves provider and summarizer instances only, not " +
                        r[1]);
                provider.emplace(plugin->make_provider(r[2]));
                reply = {"ok",
                         "decode_event",
                         flag(provider->has_decode_event()),
                         "encode_parts",
                         flag(provider->has_encode_parts()),
                         "encode_split",
                         flag(provider->has_encode_split())};
            } else if (r.size() >= 4 && r[0] == "call" && r[1] == "summarize" && summarizer) {
                reply = {"ok", summarizer->summarize(r[3])};
            } else if (r.size() >= 3 && r[0] == "call" && provider) {
                // limits.143: the caller's body cap, applied to the plugin's sinks here.
                const nucleo::plugins_detail::BodyLimit limit(
                    static_cast<std::size_t>(std::strtoull(r[2].c_str(), nullptr, 10)));
                reply = serve(*provider, r[1], Frame(r.begin() + 3, r.end()));
                reply.insert(reply.begin(), "ok");
            } else {
                reply = error_reply(nucleo::ErrorKind::kInternal,
                                    "the plugin helper got a message it does not know");
            }
        } catch (const nucleo::Error& e) {
            reply = error_reply(e.kind(), e.what());
        } catch (const std::exception& e) {
            reply = error_reply(nucleo::ErrorKind::kInternal, e.what());
        }
        if (!nucleo::plugins_detail::write_frame(kChannel, reply)) return 1;
    }
    return 0;
}
