// A request body without its cache marks, for tests that compare what two calls send apart from
// where the breakpoints sit (wire.191: the history is byte-stable, cache marks aside).
#pragma once

#include <rapidjson/document.h>

namespace nucleo::test_support {

/// Removes Anthropic's `cache_control` members, OpenAI's `prompt_cache_breakpoint` members and
/// Converse's `cachePoint` blocks (an object whose only member is `cachePoint`), at any depth.
inline void strip_cache_marks(rapidjson::Value& v) {
    if (v.IsObject()) {
        v.RemoveMember("cache_control");
        v.RemoveMember("prompt_cache_breakpoint");
        for (auto& m : v.GetObject()) strip_cache_marks(m.value);
    } else if (v.IsArray()) {
        for (rapidjson::SizeType i = v.Size(); i-- > 0;) {
            if (v[i].IsObject() && v[i].MemberCount() == 1 && v[i].HasMember("cachePoint")) {
                v.Erase(v.Begin() + i);
            } else {
                strip_cache_marks(v[i]);
            }
        }
    }
}

}  // namespace nucleo::test_support
