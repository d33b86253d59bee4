// What the config loader reads from YAML (docs/spec/limits.md limits.128-limits.133,
// docs/config.md): plain scalars are typed and quoted ones are strings, `~`/`null`/nothing is null
// only when plain, an alias reads as its anchor at each use, an alias inside the collection it
// names and an alias naming no anchor are refused, a second document is refused where its content
// starts, and text that is not YAML (bad UTF-8, a control character) is refused with where it is.
#include <gtest/gtest.h>

#include <string>

#include "config_fixture.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

/// The message of parsing `text`, which must be a kConfig refusal starting with `origin:`.
std::string refusal_of(const std::string& text) {
    try {
        Config::parse(text, "origin.yaml");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "parsed, a refusal was expected: " << text;
    return "";
}

std::string options_of(const std::string& options) {
    const Config config = Config::parse(
        "providers:\n  p:\n    plugin: anthropic\n    options: " + options + "\n", "origin.yaml");
    EXPECT_EQ(config.providers().size(), 1U);
    return config.providers().empty() ? "" : config.providers()[0].options_json;
}

TEST(YamlParse, PlainScalarsAreTypedAndQuotedOrTaggedOnesAreStrings) {
    EXPECT_EQ(options_of("{a: 12, b: '12', c: \"12\", d: !!str 12, e: 1.5, f: true, g: 'true'}"),
              R"({"a":12,"b":"12","c":"12","d":"12","e":1.5,"f":true,"g":"true"})");
}

TEST(YamlParse, NullIsPlainTildeNullOrNothingAndAQuotedNullIsAString) {
    EXPECT_EQ(options_of("{a: ~, b: null, c: NULL, d: , e: 'null', f: \"\"}"),
              R"({"a":null,"b":null,"c":null,"d":null,"e":"null","f":""})");
    // A required key written with no value is refused at the key.
    EXPECT_EQ(refusal_of("providers:\n  p:\n    plugin:\n"),
              "origin.yaml:3:5: providers.p.plugin: required value missing");
}

TEST(YamlParse, AnAliasReadsAsItsAnchorAtEachUse) {
    EXPECT_EQ(options_of("{a: &x [1, {k: v}], b: *x, c: *x}"),
              R"({"a":[1,{"k":"v"}],"b":[1,{"k":"v"}],"c":[1,{"k":"v"}]})");
}

TEST(YamlParse, AnAliasInsideItsOwnCollectionOrNamingNoAnchorIsRefused) {
    EXPECT_EQ(
        refusal_of("providers:\n  p: &x {plugin: anthropic, options: {self: *x}}\n"),
        "origin.yaml:2:45: malformed YAML: the alias *x is used inside the collection it names");
    EXPECT_EQ(
        refusal_of("providers: *nowhere\n"),
        "origin.yaml:1:12: malformed YAML: the alias *nowhere names no anchor written before it");
}

TEST(YamlParse, ASecondDocumentIsRefusedWhereItsContentStarts) {
    EXPECT_EQ(refusal_of("providers: {}\n---\n\nmodels: []\n"),
              "origin.yaml:4:1: a second YAML document (a config file holds 1 document)");
    EXPECT_EQ(refusal_of("providers: {}\n---\n"),
              "origin.yaml:2:1: a second YAML document (a config file holds 1 document)");
    // An empty file, or one of comments only, configures nothing.
    EXPECT_TRUE(Config::parse("# nothing\n", "origin.yaml").providers().empty());
    EXPECT_TRUE(Config::parse("", "origin.yaml").providers().empty());
}

TEST(YamlParse, TextThatIsNotYamlIsRefusedWithWhereItIs) {
    const std::string bad_utf8 = refusal_of("providers: {}\nmodels: \"\xff\"\n");
    EXPECT_EQ(bad_utf8, "origin.yaml:2:10: malformed YAML: invalid leading UTF-8 octet");
    EXPECT_EQ(refusal_of("providers: {}\nmodels: \"a\x01\"\n"),
              "origin.yaml:2:11: malformed YAML: control characters are not allowed");
    // The document is refused whole: nothing of what came before the bad byte is kept.
    EXPECT_EQ(refusal_of("providers:\n  p: {plugin: anthropic}\n  q: [\n"),
              "origin.yaml:4:1: malformed YAML: while parsing a flow node: did not find expected "
              "node content");
}

}  // namespace
}  // namespace nucleo
