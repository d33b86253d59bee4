// Artifact types the artifact tests declare: a citation with a summarizable body, a paper with a
// nested author artifact, and a (non-artifact) search result carrying artifacts at every depth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nucleo/artifacts.hpp"

namespace nucleo::artifact_test {

struct Citation {
    std::string url;
    std::string title;
    std::string body;
    bool operator==(const Citation&) const = default;
};

struct Author {
    std::string name;
    bool operator==(const Author&) const = default;
};

struct Paper {
    std::string title;
    Author author;
    std::string abstract_text;
};

struct Section {
    std::string heading;
    std::vector<Citation> sources;
};

struct SearchResult {
    std::string query;
    std::string notes;
    std::vector<Section> sections;
    std::optional<Paper> paper;
    std::optional<ArtifactList<Citation>> list;
};

/// Text of `n` characters made of words, so the truncating summarizer has boundaries to cut at.
inline std::string long_text(std::size_t n, const std::string& word = "evidence") {
    std::string out;
    while (out.size() < n) out += word + " ";
    out.resize(n);
    return out;
}

/// An ArtifactSummarizer that counts its calls (tests assert the per-artifact cache by it).
class CountingSummarizer final : public ArtifactSummarizer {
  public:
    std::string summarize(std::string_view text, std::size_t target_chars) const override {
        ++calls;
        return "summary of " + std::to_string(text.size()) + " bytes to " +
               std::to_string(target_chars);
    }
    mutable int calls = 0;
};

}  // namespace nucleo::artifact_test

template <>
struct nucleo::Describe<nucleo::artifact_test::Citation> {
    static constexpr std::string_view name = "Citation";
    static constexpr std::string_view artifact_alias = "link:cite";
    static auto fields() {
        using nucleo::schema::field;
        using C = nucleo::artifact_test::Citation;
        return std::tuple(field("url", &C::url).required().description("Where it was found"),
                          field("title", &C::title).description("Its title"),
                          field("body", &C::body).summarizable().description("Full text"));
    }
};

template <>
struct nucleo::Describe<nucleo::artifact_test::Author> {
    static constexpr std::string_view name = "Author";
    static constexpr std::string_view artifact_alias = "person:author";
    static auto fields() {
        return std::tuple(
            nucleo::schema::field("name", &nucleo::artifact_test::Author::name).required());
    }
};

template <>
struct nucleo::Describe<nucleo::artifact_test::Paper> {
    static constexpr std::string_view name = "Paper";
    static constexpr std::string_view artifact_alias = "doc:paper";
    static auto fields() {
        using nucleo::schema::field;
        using P = nucleo::artifact_test::Paper;
        return std::tuple(field("title", &P::title).required(), field("author", &P::author),
                          field("abstract", &P::abstract_text).summarizable());
    }
};

template <>
struct nucleo::Describe<nucleo::artifact_test::Section> {
    static constexpr std::string_view name = "Section";
    static auto fields() {
        using nucleo::schema::field;
        using S = nucleo::artifact_test::Section;
        return std::tuple(field("heading", &S::heading), field("sources", &S::sources));
    }
};

template <>
struct nucleo::Describe<nucleo::artifact_test::SearchResult> {
    static constexpr std::string_view name = "SearchResult";
    static auto fields() {
        using nucleo::schema::field;
        using R = nucleo::artifact_test::SearchResult;
        return std::tuple(field("query", &R::query), field("notes", &R::notes).summarizable(),
                          field("sections", &R::sections), field("paper", &R::paper),
                          field("list", &R::list));
    }
};
