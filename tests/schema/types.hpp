// Described types shared by the schema tests.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nucleo/schema.hpp"

namespace nucleo::test {

/// tools.30: the SearchInput example.
struct SearchInput {
    std::string query;
    std::optional<int> maxResults;
};

enum class Priority { kLow, kHigh, kUrgent };

struct Address {
    std::string street;
    std::string cityName;
};

struct Ticket {
    std::string title;
    Priority priority = Priority::kLow;
    std::vector<Priority> escalations;
    std::optional<Address> address;
    std::vector<Address> previous;
    std::string internalNote;  // ignored
    std::string customerId;    // renamed to "customer"
    double score = 0;
    bool open = false;
    std::int64_t count_ = 0;
    std::uint8_t small = 0;
};

/// A typed answer whose own nested reasoning must drop with the envelope's (tools.20).
struct Finding {
    std::string claim;
    std::string why;  // marked .reasoning()
};
struct Verdict {
    std::string rationale;  // marked .reasoning()
    std::string decision;
    std::vector<Finding> findings;
};

}  // namespace nucleo::test

template <>
struct nucleo::Describe<nucleo::test::SearchInput> {
    static constexpr std::string_view name = "SearchInput";
    static auto fields() {
        using nucleo::test::SearchInput;
        using schema::field;
        return std::tuple(
            field("query", &SearchInput::query).required().description("The search query"),
            field("maxResults", &SearchInput::maxResults)
                .description("Maximum results to return (1-100)"));
    }
};

template <>
struct nucleo::Describe<nucleo::test::Priority> {
    static constexpr std::string_view name = "Priority";
    static auto constants() {
        using nucleo::test::Priority;
        return std::array{schema::constant(Priority::kLow, "LOW"),
                          schema::constant(Priority::kHigh, "HIGH"),
                          schema::constant(Priority::kUrgent, "URGENT")};
    }
};

template <>
struct nucleo::Describe<nucleo::test::Address> {
    static auto fields() {
        using nucleo::test::Address;
        using schema::field;
        return std::tuple(field("street", &Address::street).required(),
                          field("cityName", &Address::cityName).description("City"));
    }
};

template <>
struct nucleo::Describe<nucleo::test::Ticket> {
    static constexpr std::string_view name = "Ticket";
    static auto fields() {
        using nucleo::test::Priority;
        using nucleo::test::Ticket;
        using schema::field;
        return std::tuple(field("title", &Ticket::title).required().example("Printer on fire"),
                          field("priority", &Ticket::priority).required().example(Priority::kHigh),
                          field("escalations", &Ticket::escalations),
                          field("address", &Ticket::address), field("previous", &Ticket::previous),
                          field("internalNote", &Ticket::internalNote).ignored(),
                          field("customerId", &Ticket::customerId).json_name("customer"),
                          field("score", &Ticket::score), field("open", &Ticket::open),
                          field("count_", &Ticket::count_), field("small", &Ticket::small));
    }
};

template <>
struct nucleo::Describe<nucleo::test::Finding> {
    static auto fields() {
        using nucleo::test::Finding;
        using schema::field;
        return std::tuple(field("claim", &Finding::claim).required(),
                          field("why", &Finding::why).required().reasoning());
    }
};

template <>
struct nucleo::Describe<nucleo::test::Verdict> {
    static constexpr std::string_view name = "Verdict";
    static auto fields() {
        using nucleo::test::Verdict;
        using schema::field;
        return std::tuple(
            field("rationale", &Verdict::rationale).reasoning().description("Why you decided"),
            field("decision", &Verdict::decision).required(),
            field("findings", &Verdict::findings));
    }
};

namespace nucleo::test {
/// A type that contains itself: schemas stop at the inner occurrence, JSON nests freely.
struct TreeNode {
    std::string label;
    std::vector<TreeNode> children;
};
}  // namespace nucleo::test

template <>
struct nucleo::Describe<nucleo::test::TreeNode> {
    static auto fields() {
        using nucleo::test::TreeNode;
        using schema::field;
        return std::tuple(field("label", &TreeNode::label).required(),
                          field("children", &TreeNode::children));
    }
};
