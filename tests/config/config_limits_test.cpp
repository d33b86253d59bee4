// The config loader's limits (limits.124 to limits.128, limits.131, limits.133), each refusal naming the limit, its value
// and where: an alias bomb (10^9 nodes in 2.6 KB) refused fast, ${...} references nested 5x10^4
// deep refused without a crash, includes of anything but a regular file, a file past the size
// limit, a second YAML document, plugin names that are neither plain nor a path, and collections
// nested past the YAML nesting limit (limits.131), and a text a parser could stop moving through
// (limits.133).
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"
#include "config/env_expand.hpp"
#include "config_fixture.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using test::refusal_of;
using test::scratch_dir;
using test::write_file;

/// Nine levels of ten aliases each under a list of ten strings: 10^9 strings once expanded.
std::string alias_bomb() {
    std::string text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    const std::string names = "abcdefghi";
    for (std::size_t level = 1; level < names.size(); ++level) {
        const std::string prev(1, names[level - 1]);
        text += std::string(1, names[level]) + ": &" + names[level] + " [";
        for (int i = 0; i < 10; ++i) text += (i == 0 ? "*" : ",*") + prev;
        text += "]\n";
    }
    return text;
}

TEST(ConfigLimits, AnAliasBombIsRefusedAtTheNodeLimit) {
    const std::string bomb = alias_bomb();
    ASSERT_LT(bomb.size(), 2700U);
    const auto file = write_file(scratch_dir() / "nucleo.yaml", bomb);
    const std::string message = refusal_of(file);
    EXPECT_EQ(message.rfind(file.string() + ":", 0), 0U) << message;
    EXPECT_NE(message.find("more than 100000 YAML nodes, each alias counted at every use (the node limit)"),
              std::string::npos)
        << message;
}

TEST(ConfigLimits, ManyAliasesUnderTheLimitAreRead) {
    // 10 x 10 x 10 uses: well under the limit, and read as the plain YAML it stands for.
    const auto file = write_file(scratch_dir() / "nucleo.yaml",
                                 "providers:\n  anthropic: &p {plugin: anthropic}\n"
                                 "  second: *p\n");
    const Config config = Config::load(file);
    EXPECT_EQ(config.providers().size(), 2U);
}

TEST(ConfigLimits, NucleoModelsRefusesAnAliasBombWithExit2) {
    const auto file = write_file(scratch_dir() / "nucleo.yaml", alias_bomb());
    const test_support::CliRun r =
        test_support::run_command(std::string(NUCLEO_CLI) + " models --config " + file.string());
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("(the node limit)"), std::string::npos) << r.err;
}

TEST(ConfigLimits, ReferencesNestedFiftyThousandDeepAreRefusedNamingTheLimit) {
    std::string value;
    for (int i = 0; i < 50000; ++i) value += "${A:-";
    value += "x" + std::string(50000, '}');
    const auto file = write_file(scratch_dir() / "nucleo.yaml",
                                 "providers:\n  anthropic:\n    plugin: anthropic\n    base_url: \"" +
                                     value + "\"\n");
    const std::string message = refusal_of(file);
    EXPECT_EQ(message.rfind(file.string() + ":4:15: providers.anthropic.base_url: ", 0), 0U)
        << message.substr(0, 300);
    EXPECT_NE(message.find("nested deeper than 16 levels (the reference nesting limit)"),
              std::string::npos)
        << message.substr(0, 300);
}

TEST(ConfigLimits, ReferencesAtTheNestingLimitExpand) {
    std::string at_limit;
    for (int i = 0; i < config_internal::kMaxReferenceNesting; ++i) at_limit += "${NUCLEO_UNSET_X:-";
    at_limit += "deep" + std::string(config_internal::kMaxReferenceNesting, '}');
    const auto none = [](std::string_view) { return std::optional<std::string>(); };
    EXPECT_EQ(config_internal::expand_env(at_limit, none), "deep");
    EXPECT_THROW(config_internal::expand_env("${A:-" + at_limit + "}", none),
                 config_internal::ExpandError);
}

TEST(ConfigLimits, IncludesOfDevicesAndFoldersAreRefusedWithFileLineColumn) {
    const auto dir = scratch_dir();
    for (const std::string target : {"/dev/zero", "/etc"}) {
        const auto file = write_file(dir / "nucleo.yaml", "include: " + target + "\n");
        EXPECT_EQ(refusal_of(file), file.string() + ":1:10: include: included file " + target +
                                        " is not a regular file (a config is read from regular "
                                        "files only)");
    }
    EXPECT_EQ(refusal_of("/dev/zero"),
              "config file /dev/zero is not a regular file (a config is read from regular files only)");
}

TEST(ConfigLimits, AFileLargerThanTheSizeLimitIsRefused) {
    const auto dir = scratch_dir();
    write_file(dir / "big.yaml", "# " + std::string(1024 * 1024, 'x') + "\n");
    const auto file = write_file(dir / "nucleo.yaml", "include: big.yaml\n");
    EXPECT_EQ(refusal_of(file), file.string() + ":1:10: include: included file " +
                                    (dir / "big.yaml").string() +
                                    " is larger than 1048576 bytes (the config file size limit)");
}

TEST(ConfigLimits, ASecondYamlDocumentIsRefused) {
    const auto file = write_file(scratch_dir() / "nucleo.yaml",
                                 "providers:\n  anthropic: {plugin: anthropic}\n---\nproviders: {}\n");
    const std::string message = refusal_of(file);
    EXPECT_EQ(message.rfind(file.string() + ":4:", 0), 0U) << message;
    EXPECT_NE(message.find("a second YAML document (a config file holds 1 document)"),
              std::string::npos)
        << message;
}

TEST(ConfigLimits, PluginNamesArePlainUnlessWrittenAsAPath) {
    const auto dir = scratch_dir();
    for (const std::string bad : {"../evil", "Anthropic", "a.b", "x/../../y"}) {
        const auto file = write_file(dir / "nucleo.yaml",
                                     "providers:\n  anthropic:\n    plugin: \"" + bad + "\"\n");
        EXPECT_EQ(refusal_of(file),
                  file.string() + ":3:13: providers.anthropic.plugin: \"" + bad +
                      "\" is neither a plugin name ([a-z0-9_-]+) nor a path to a shared object "
                      "(holding a '/' and ending in .so)");
    }
    const auto file = write_file(dir / "nucleo.yaml",
                                 "providers:\n  a: {plugin: c-provider_2}\n"
                                 "  b: {plugin: /opt/nucleo/nucleo-b.so}\n"
                                 "summarizer: {plugin: ./plugins/nucleo-s.so}\n");
    const Config config = Config::load(file);
    ASSERT_EQ(config.providers().size(), 2U);
    EXPECT_EQ(config.providers()[1].plugin, "/opt/nucleo/nucleo-b.so");
}

/// limits.131: the refusal of collections nested too deep, with file:line:column of the first one.
std::string nesting_refusal(const std::filesystem::path& file, int line, int column) {
    return file.string() + ":" + std::to_string(line) + ":" + std::to_string(column) +
           ": collections nested deeper than 64 levels (the YAML nesting limit)";
}

TEST(ConfigLimits, FlowSequencesNestedThreeHundredDeepAreRefusedWhereTheLimitIsPassed) {
    // ~300 nested `[` in a 2.6 KB config (how the first fuzz run's slow input was described; the
    // input that really hung yaml-cpp is the stray ',' below). The root mapping is level 1, so
    // the 64th `[` (column 9 + 63) opens level 65.
    std::string text = "models: " + std::string(300, '[') + "x" + std::string(300, ']') + "\n";
    text += "# " + std::string(2600 - text.size() - 3, 'p') + "\n";
    ASSERT_EQ(text.size(), 2600U);
    const auto file = write_file(scratch_dir() / "nucleo.yaml", text);
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 1, 72));
    // Unclosed, as a mutated file leaves it: refused at the same `[`, before the parser reaches
    // the end that is missing.
    write_file(file, "models: " + std::string(300, '[') + "\n");
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 1, 72));
    // Flow mappings: the 64th `{` opens level 65.
    std::string maps = "models: ";
    for (int i = 0; i < 300; ++i) maps += "{a: ";
    write_file(file, maps + "\n");
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 1, 9 + 4 * 63));
}

TEST(ConfigLimits, BlockCollectionsNestedPastTheLimitAreRefused) {
    // Mappings indented one more space per line: the mapping of line 65 is level 65.
    std::string text;
    for (int i = 0; i < 200; ++i) text += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
    const auto file = write_file(scratch_dir() / "nucleo.yaml", text);
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 65, 65));
    // Sequences of sequences on one line: `- - - x`.
    std::string dashes;
    for (int i = 0; i < 200; ++i) dashes += "- ";
    write_file(file, dashes + "x\n");
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 1, 1 + 2 * 64));
}

TEST(ConfigLimits, CollectionsAtTheNestingLimitAreRead) {
    // The root, providers, the provider and its options are four levels; a value 60 deep inside
    // the options brings the file to exactly 64.
    const std::string value = std::string(60, '[') + "1" + std::string(60, ']');
    const auto file = write_file(scratch_dir() / "nucleo.yaml",
                                 "providers:\n  anthropic:\n    plugin: anthropic\n"
                                 "    options: {deep: " + value + "}\n");
    const Config config = Config::load(file);
    ASSERT_EQ(config.providers().size(), 1U);
    EXPECT_EQ(config.providers()[0].options_json, "{\"deep\":" + value + "}");
    write_file(file, "providers:\n  anthropic:\n    plugin: anthropic\n"
                     "    options: {deep: [" + value + "]}\n");
    EXPECT_EQ(refusal_of(file), nesting_refusal(file, 4, 21 + 60));
}

TEST(ConfigLimits, AStrayCommaAtTheTopLevelIsRefusedInsteadOfLoadedForever) {
    // limits.133: yaml-cpp 0.7 started empty documents at a top-level ',' forever; the fuzzer's
    // 78-byte input (tests/fuzz/corpus/fuzz_config/stray_comma_loop.yaml) hung the loader then.
    const std::string refusal = ":1:1: malformed YAML: while parsing a block node: did not find expected node content";
    const auto file = write_file(scratch_dir() / "nucleo.yaml", ",\n");
    EXPECT_EQ(refusal_of(file), file.string() + refusal);
    write_file(file, "providers:\n  a: {plugin: anthropic}\n,\n");
    EXPECT_NE(refusal_of(file).rfind(file.string() + ":", 0), std::string::npos);
    write_file(file, ",*e,*e,*e]\ng: &g [*f,*f,*f,*f,[*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]providers: J} []\n");
    EXPECT_EQ(refusal_of(file), file.string() + refusal);
}

TEST(ConfigLimits, NucleoModelsRefusesDeepNestingWithExit2) {
    const auto file = write_file(scratch_dir() / "nucleo.yaml",
                                 "models: " + std::string(5000, '[') + "\n");
    const test_support::CliRun r =
        test_support::run_command(std::string(NUCLEO_CLI) + " models --config " + file.string());
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("(the YAML nesting limit)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nucleo
