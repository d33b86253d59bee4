// The conformance kit, `nucleo plugin check` (abi.120-abi.127), against the faulty fixtures of
// tests/abi/fixtures/faulty.c: each makes the kit report exactly its kind of finding and exit 1;
// the good one passes; what is no plugin at all is bad input (exit 2, one line).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::test_support::CliRun;

const fs::path kFaulty = fs::path(ABI_FIXTURE_DIR) / "faulty";

/// `nucleo plugin check ARGS`. Under AddressSanitizer handle_segv=0 lets a crashing fixture's
/// signal end the child as in a plain build (not the sanitizer's report and exit status 1).
CliRun kit(const std::string& args) {
    return nucleo::test_support::run_command(
        "env ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" NUCLEO_LOG_LEVEL=off '" +
        std::string(NUCLEO_CLI) + "' plugin check " + args);
}

struct Finding {
    std::string slot, case_name, expected, got;
};

/// The kit's --json report of a fixture: its findings, after checking the exit status.
std::vector<Finding> findings_of(const std::string& fixture, int status, const std::string& extra = "") {
    const CliRun r = kit("'" + (kFaulty / ("nucleo-" + fixture + ".so")).string() + "' --json " + extra);
    EXPECT_EQ(r.status, status) << r.out << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    EXPECT_FALSE(d.HasParseError()) << r.out << r.err;
    std::vector<Finding> out;
    if (d.HasParseError() || !d.IsObject()) return out;
    EXPECT_EQ(d["schema_version"].GetInt(), 1);
    EXPECT_GE(d["cases"].GetUint(), 9U) << r.out;  // the ABI and summarizer cases at least
    EXPECT_EQ(d["passed"].GetUint() + d["failed"].GetUint(), d["cases"].GetUint());
    for (const auto& f : d["findings"].GetArray())
        out.push_back({f["slot"].GetString(), f["case"].GetString(), f["expected"].GetString(), f["got"].GetString()});
    return out;
}

std::string listed(const std::vector<Finding>& findings) {
    std::string s;
    for (const auto& f : findings) s += f.case_name + " [" + f.slot + "]: " + f.expected + " / " + f.got + "\n";
    return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ConformanceKit, AGoodPluginPassesAndTheTextReportSaysSo) {
    EXPECT_TRUE(findings_of("kit_good", 0).empty());
    const CliRun r = kit("'" + (kFaulty / "nucleo-kit_good.so").string() + "'");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, " passed, 0 failed, 0 findings")) << r.out;
}

// abi.125, abi.108: encode_split's open + turns + close must be encode_parts' body.
TEST(ConformanceKit, ASplitThatIsNotTheBodyIsAnEncodeSplitFinding) {
    const auto f = findings_of("kit_bad_split", 1);
    ASSERT_FALSE(f.empty());
    for (const Finding& x : f) {
        EXPECT_EQ(x.slot, "encode_split") << listed(f);
        EXPECT_TRUE(has(x.expected, "open + turns + close")) << listed(f);
        EXPECT_TRUE(has(x.got, "{\"n\":|2|}")) << listed(f);
    }
}

TEST(ConformanceKit, AnExtraExportedSymbolIsAnAbiFinding) {
    const auto f = findings_of("kit_extra_export", 1);
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "abi/exports");
    EXPECT_TRUE(has(f[0].got, "nucleo_fixture_extra")) << listed(f);
}

TEST(ConformanceKit, ACrashInASlotIsThatCasesFindingAndTheRunGoesOn) {
    const auto f = findings_of("kit_crashing_encode", 1);
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "encode/two_thousand_messages");
    EXPECT_EQ(f[0].slot, "encode");
    EXPECT_TRUE(has(f[0].got, "crashed: signal 11")) << listed(f);
}

TEST(ConformanceKit, AHangInASlotIsThatCasesFindingAfterTheTimeout) {
    // 5 s: a child under the sanitizers on a loaded machine may take seconds to start.
    const auto f = findings_of("kit_hanging_decode", 1, "--timeout 5");
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "decode/http_529");
    EXPECT_TRUE(has(f[0].got, "did not return within 5 s")) << listed(f);
}

// abi.131: after one hang, the slot's remaining cases are not run (each would wait the timeout)
// and the report says how many; the other slots' cases still run.
TEST(ConformanceKit, AfterAHangTheRestOfThatSlotIsSkippedAndSaidSo) {
    const std::string plugin = "'" + (kFaulty / "nucleo-kit_hanging_decode.so").string() + "'";
    CliRun r = kit(plugin + " --json --timeout 5");
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    ASSERT_TRUE(d["skipped"].IsArray()) << r.out;
    ASSERT_EQ(d["skipped"].Size(), 1U) << r.out;
    EXPECT_STREQ(d["skipped"][0]["slot"].GetString(), "decode");
    EXPECT_STREQ(d["skipped"][0]["after"].GetString(), "decode/http_529");
    const auto skipped = d["skipped"][0]["cases"].GetUint64();
    EXPECT_GE(skipped, 9U) << r.out;  // http_400 and the hostile bodies come after http_529
    r = kit(plugin + " --timeout 5");
    EXPECT_TRUE(has(r.out, "SKIP " + std::to_string(skipped) +
                               " more cases of decode: not run after decode/http_529 hung"))
        << r.out;
}

// abi.131: stdout belongs to the host (`ask --json` prints its document there): a plugin that
// writes to it is caught in the case that did it, and the check's own report is not garbled.
TEST(ConformanceKit, AWriteToStdoutIsAFindingOfTheCaseThatWroteIt) {
    const auto f = findings_of("kit_prints", 1);
    ASSERT_FALSE(f.empty());
    for (const auto& one : f) {
        EXPECT_EQ(one.slot, "encode") << listed(f);
        EXPECT_TRUE(has(one.expected, "nothing written to stdout")) << listed(f);
        EXPECT_TRUE(has(one.got, "bytes: \"debug: encoding a request")) << listed(f);
    }
}

// abi.131: a plugin that declares no wire family still has its answers checked against the
// normalized form, with the documented answers of every family; a finding names its corpus file.
TEST(ConformanceKit, AnAnswerOfAPluginWithoutAFamilyIsStillChecked) {
    const CliRun r = kit("'" + (kFaulty / "nucleo-kit_finished.so").string() + "' --json");
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    bool seen = false;
    for (const auto& f : d["findings"].GetArray()) {
        const std::string name = f["case"].GetString();
        if (name.rfind("decode/any_wire/anthropic-messages/", 0) != 0) continue;
        seen = true;
        EXPECT_TRUE(has(f["got"].GetString(), "\"finished\" is not a normalized stop reason") ||
                    has(f["got"].GetString(), "usage.input_tokens is -3"))
            << f["got"].GetString();
        ASSERT_TRUE(f.HasMember("source")) << name;
        EXPECT_EQ(
            std::string(f["source"].GetString()).rfind("decode/anthropic-messages.json entry ", 0),
            0U)
            << f["source"].GetString();
    }
    EXPECT_TRUE(seen) << r.out;
    const CliRun text = kit("'" + (kFaulty / "nucleo-kit_finished.so").string() + "'");
    EXPECT_TRUE(has(text.out, "(corpus decode/anthropic-messages.json entry ")) << text.out;
}

TEST(ConformanceKit, AnErrorWithoutAMessageIsAFinding) {
    const auto f = findings_of("kit_bad_error", 1);
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "decode/http_404");
    EXPECT_EQ(f[0].got, "err.message is empty");
}

TEST(ConformanceKit, ASinkWrittenAfterItsCallReturnedIsAFinding) {
    const auto f = findings_of("kit_late_sink", 1);
    ASSERT_FALSE(f.empty());
    for (const auto& one : f) {
        EXPECT_EQ(one.slot, "sink") << listed(f);
        EXPECT_EQ(one.got, "a write to the sink of encode was refused") << listed(f);
    }
}

TEST(ConformanceKit, UsageAsAStringIsADecodeFinding) {
    const auto f = findings_of("kit_usage_string", 1);
    ASSERT_FALSE(f.empty());
    for (const auto& one : f) {
        EXPECT_EQ(one.slot, "decode") << listed(f);
        EXPECT_TRUE(has(one.got, "usage.input_tokens is \"12\", not a non-negative integer")) << listed(f);
    }
}

TEST(ConformanceKit, AnEncodeKeepingStateBetweenCallsIsAFinding) {
    const auto f = findings_of("kit_stateful", 1);
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "encode/concurrent_calls_agree");
    EXPECT_TRUE(has(f[0].expected, "the same request for the same input")) << listed(f);
}

TEST(ConformanceKit, AHeaderWithALineBreakBreaksTheRuleBook) {
    const auto f = findings_of("kit_bad_header", 1);
    ASSERT_FALSE(f.empty());
    for (const auto& one : f) {
        EXPECT_EQ(one.slot, "encode") << listed(f);
        EXPECT_TRUE(has(one.got, "wire.151")) << listed(f);
    }
}

TEST(ConformanceKit, ASummaryLongerThanItsTextBreaksTheSizeContract) {
    const auto f = findings_of("kit_long_summary", 1);
    ASSERT_EQ(f.size(), 2U) << listed(f);
    EXPECT_EQ(f[0].case_name, "summarize/size_contract_text");
    EXPECT_EQ(f[1].case_name, "summarize/size_contract_segments");
    EXPECT_TRUE(has(f[0].expected, "shorter than")) << listed(f);
}

TEST(ConformanceKit, AStoreSurfaceClaimedButMissingIsAFinding) {
    const auto f = findings_of("kit_store_claims", 1);
    ASSERT_EQ(f.size(), 1U) << listed(f);
    EXPECT_EQ(f[0].case_name, "store/session_round_trip");
    EXPECT_TRUE(has(f[0].expected, "as capabilities claim \"session\"")) << listed(f);
    EXPECT_EQ(f[0].got, "NULL");
}

TEST(ConformanceKit, WhatIsNoPluginIsBadInputInOneLine) {
    const fs::path bad = fs::path(ABI_FIXTURE_DIR) / "bad";
    const fs::path hostile = fs::path(ABI_FIXTURE_DIR) / "hostile";
    struct Case {
        fs::path file;
        std::string says;
    };
    for (const Case& c : {Case{bad / "nucleo-not_elf.so", "not a shared object"},
                          Case{bad / "nucleo-wrong_major.so", "built for ABI major"},
                          Case{bad / "nucleo-absent.so", "no such file"},
                          Case{hostile / "nucleo-init_crashes.so", "crashed while loading: signal 11"},
                          Case{bad / "nucleo-init_fails.so", "init failed"}}) {
        const CliRun r = kit("'" + c.file.string() + "'");
        EXPECT_EQ(r.status, 2) << c.file << r.out << r.err;
        EXPECT_TRUE(has(r.err, c.says)) << r.err;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    const CliRun hang = kit("'" + (hostile / "nucleo-init_hangs.so").string() + "' --timeout 1");
    EXPECT_EQ(hang.status, 2) << hang.err;
    EXPECT_TRUE(has(hang.err, "did not finish loading within 1 s")) << hang.err;
}

TEST(ConformanceKit, APluginGivenByNameIsFoundOnTheSearchPath) {
    const CliRun r = kit("kit_good --path '" + kFaulty.string() + "'");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "nucleo-kit_good.so: ")) << r.out;
    const CliRun missing = kit("kit_absent --path '" + kFaulty.string() + "'");
    EXPECT_EQ(missing.status, 2) << missing.out << missing.err;
    EXPECT_TRUE(has(missing.err, "no plugin named 'kit_absent'")) << missing.err;
}

TEST(ConformanceKit, BadUsageIsRefused) {
    EXPECT_EQ(kit("").status, 2);
    const CliRun family = kit("'" + (kFaulty / "nucleo-kit_good.so").string() + "' --family smoke-signals");
    EXPECT_EQ(family.status, 2);
    EXPECT_TRUE(has(family.err, "--family expects")) << family.err;
}

}  // namespace
