// Loading the shipped config (nucleo.yaml with its model catalog, every record checked) and
// resolving a model, against the floor of the same run: yaml-cpp parsing the same two files
// without reading them into records. The target: load and resolve under 1 ms (bench/RESULTS.md).
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"

namespace {

const std::filesystem::path kConfig = std::filesystem::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml";
const std::filesystem::path kModels = std::filesystem::path(NUCLEO_SOURCE_DIR) / "config" / "models.yaml";

/// The floor: the YAML of both files parsed into nodes, nothing read out of them.
void BM_ParseYamlOnly(benchmark::State& state) {
    for (auto _ : state) {
        YAML::Node config = YAML::LoadFile(kConfig.string());
        YAML::Node models = YAML::LoadFile(kModels.string());
        benchmark::DoNotOptimize(config);
        benchmark::DoNotOptimize(models);
    }
}
BENCHMARK(BM_ParseYamlOnly)->Unit(benchmark::kMicrosecond);

/// What a host does at start: the config loaded and checked, the default model resolved and its
/// status checked.
void BM_LoadConfigAndResolveModel(benchmark::State& state) {
    for (auto _ : state) {
        const nucleo::Config config = nucleo::Config::load(kConfig);
        const nucleo::ModelSpec& model = config.catalog().find("claude-sonnet-5-5");
        nucleo::check_model_status(model, "2026-12-05");
        benchmark::DoNotOptimize(&model);
    }
}
BENCHMARK(BM_LoadConfigAndResolveModel)->Unit(benchmark::kMicrosecond);

/// Resolving a model in a loaded catalog (every call does it).
void BM_ResolveModel(benchmark::State& state) {
    const nucleo::Config config = nucleo::Config::load(kConfig);
    for (auto _ : state) {
        const nucleo::ModelSpec& model = config.catalog().find("gpt-6-luna");
        benchmark::DoNotOptimize(&model);
    }
}
BENCHMARK(BM_ResolveModel)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
