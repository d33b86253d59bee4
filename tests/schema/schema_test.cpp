// Schemas from C++ types (tools.30-34).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <regex>
#include <set>

#include "nucleo/errors.hpp"
#include "nucleo/schema.hpp"
#include "nucleo/thinking_response.hpp"
#include "types.hpp"

namespace nucleo::test {
namespace {

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

/// The message of the nucleo::Error that `f` throws, checking its kind.
template <typename F>
std::string error_of(F&& f, ErrorKind kind = ErrorKind::kInvalidArgument) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), kind) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error thrown";
    return {};
}

TEST(SchemaGeneration, SearchInputBecomesTheSeedsSchemaExactly) {
    // tools.30: "Becomes: {"type": "object", "properties": {"query": ..., "max_results": ...},
    // "required": ["query"]}".
    const auto expected = parse(R"json({
      "type": "object",
      "properties": {
        "query": {"type": "string", "description": "The search query"},
        "max_results": {"type": "integer", "description": "Maximum results to return (1-100)"}
      },
      "required": ["query"]
    })json");
    const auto actual = parse(schema::json_schema<SearchInput>());
    EXPECT_TRUE(actual == expected) << schema::json_schema<SearchInput>();
}

TEST(SchemaGeneration, PropertyNamesAreTheFieldNamesInSnakeCase) {
    // tools.31: "Property names are the fields' names in snake_case".
    EXPECT_EQ(schema::snake_case("maxResults"), "max_results");
    EXPECT_EQ(schema::snake_case("query"), "query");
    EXPECT_EQ(schema::snake_case("already_snake"), "already_snake");
    EXPECT_EQ(schema::snake_case("HTTPServer"), "http_server");
    EXPECT_EQ(schema::snake_case("userID"), "user_id");
    EXPECT_EQ(schema::snake_case("line2Text"), "line2_text");
    EXPECT_EQ(schema::snake_case("count_"), "count");
    const auto doc = parse(schema::json_schema<Ticket>());
    EXPECT_TRUE(doc["properties"].HasMember("count"));
    EXPECT_TRUE(doc["properties"]["address"]["properties"].HasMember("city_name"));
}

TEST(SchemaGeneration, JsonPropertyRenamesAndJsonIgnoreLeavesOut) {
    // tools.31: "unless a @JsonProperty names the field otherwise; a @JsonIgnore field is left
    // out."
    const auto doc = parse(schema::json_schema<Ticket>());
    const auto& props = doc["properties"];
    EXPECT_TRUE(props.HasMember("customer"));
    EXPECT_FALSE(props.HasMember("customer_id"));
    EXPECT_FALSE(props.HasMember("internal_note"));
    EXPECT_FALSE(props.HasMember("internalNote"));

    Ticket t;
    t.title = "t";
    t.customerId = "c-9";
    t.internalNote = "secret";
    const auto written = parse(schema::to_json(t));
    EXPECT_STREQ(written["customer"].GetString(), "c-9");
    EXPECT_FALSE(written.HasMember("internal_note"));
    EXPECT_EQ(schema::to_json(t).find("secret"), std::string::npos);

    const Ticket read = schema::from_json<Ticket>(
        R"({"title":"t","priority":"LOW","customer":"c-1","internal_note":"x","internalNote":"y"})");
    EXPECT_EQ(read.customerId, "c-1");
    EXPECT_EQ(read.internalNote, "");
}

TEST(SchemaGeneration, EnumPublishesAsStringWithEnumArrayAlsoInsideCollections) {
    // tools.32: "An enum-typed field publishes "type": "string" with an enum array of the
    // constants in the form the serializer reads back (a collection of enums constrains its
    // items the same way)".
    const auto doc = parse(schema::json_schema<Ticket>());
    const auto expected_enum = parse(R"({"type":"string","enum":["LOW","HIGH","URGENT"]})");
    const auto& priority = doc["properties"]["priority"];
    EXPECT_STREQ(priority["type"].GetString(), "string");
    EXPECT_TRUE(priority["enum"] == expected_enum["enum"]);
    const auto& escalations = doc["properties"]["escalations"];
    EXPECT_STREQ(escalations["type"].GetString(), "array");
    EXPECT_TRUE(escalations["items"] == expected_enum);

    // "in the form the serializer reads back": each published constant reads back.
    for (const auto& c : priority["enum"].GetArray()) {
        const std::string json =
            std::string(R"({"title":"t","priority":")") + c.GetString() + "\"}";
        const Ticket t = schema::from_json<Ticket>(json);
        EXPECT_EQ(parse(schema::to_json(t))["priority"], c);
    }
}

TEST(SchemaGeneration, ExamplesPublishAsTheStandardExamplesKeyword) {
    // tools.32: "Example values publish as the standard examples keyword".
    const auto doc = parse(schema::json_schema<Ticket>());
    EXPECT_TRUE(doc["properties"]["title"]["examples"] == parse(R"(["Printer on fire"])"));
    EXPECT_TRUE(doc["properties"]["priority"]["examples"] == parse(R"(["HIGH"])"));
    EXPECT_FALSE(doc["properties"]["open"].HasMember("examples"));
}

TEST(SchemaGeneration, NestedStructsVectorsOptionalsAndScalars) {
    const auto doc = parse(schema::json_schema<Ticket>());
    const auto& props = doc["properties"];
    const auto address = parse(R"({"type":"object","properties":{
        "street":{"type":"string"},"city_name":{"type":"string","description":"City"}},
        "required":["street"]})");
    EXPECT_TRUE(props["address"] == address);  // std::optional: the value's schema
    EXPECT_STREQ(props["previous"]["type"].GetString(), "array");
    EXPECT_TRUE(props["previous"]["items"] == address);
    EXPECT_STREQ(props["score"]["type"].GetString(), "number");
    EXPECT_STREQ(props["open"]["type"].GetString(), "boolean");
    EXPECT_STREQ(props["small"]["type"].GetString(), "integer");
    EXPECT_TRUE(doc["required"] == parse(R"(["title","priority"])"));
}

TEST(SchemaJson, RoundTripKeepsEveryDescribedField) {
    Ticket t;
    t.title = "Printer \"on\" fire\n";
    t.priority = Priority::kUrgent;
    t.escalations = {Priority::kHigh, Priority::kLow};
    t.address = Address{"1 Main St", "Springfield"};
    t.previous = {Address{"a", "b"}, Address{"c", ""}};
    t.customerId = "c-7";
    t.score = 0.25;
    t.open = true;
    t.count_ = -9000000000LL;
    t.small = 200;
    const Ticket back = schema::from_json<Ticket>(schema::to_json(t));
    EXPECT_EQ(back.title, t.title);
    EXPECT_EQ(back.priority, t.priority);
    EXPECT_EQ(back.escalations, t.escalations);
    ASSERT_TRUE(back.address.has_value());
    EXPECT_EQ(back.address->street, "1 Main St");
    EXPECT_EQ(back.address->cityName, "Springfield");
    ASSERT_EQ(back.previous.size(), 2u);
    EXPECT_EQ(back.previous[1].street, "c");
    EXPECT_EQ(back.customerId, "c-7");
    EXPECT_EQ(back.score, 0.25);
    EXPECT_TRUE(back.open);
    EXPECT_EQ(back.count_, -9000000000LL);
    EXPECT_EQ(back.small, 200);
    EXPECT_EQ(schema::to_json(back), schema::to_json(t));
}

TEST(SchemaJson, EmptyOptionalIsLeftOutAndAbsentOrNullResetsIt) {
    SearchInput in{"cats", std::nullopt};
    EXPECT_EQ(schema::to_json(in), R"({"query":"cats"})");
    in.maxResults = 5;
    EXPECT_EQ(schema::to_json(in), R"({"query":"cats","max_results":5})");
    EXPECT_FALSE(schema::from_json<SearchInput>(R"({"query":"q","max_results":null})")
                     .maxResults.has_value());
    EXPECT_EQ(schema::from_json<SearchInput>(R"({"query":"q","max_results":7})").maxResults, 7);
}

TEST(SchemaJson, ReadErrorsNameThePathOfTheBadFieldAndWhatWasExpected) {
    const std::string wrong_type = error_of([] {
        (void)schema::from_json<Ticket>(
            R"({"title":"t","priority":"LOW","previous":[{"street":"a"},{"street":5}]})");
    });
    EXPECT_NE(wrong_type.find("$.previous[1].street"), std::string::npos) << wrong_type;
    EXPECT_NE(wrong_type.find("expected a string, got an integer"), std::string::npos)
        << wrong_type;
    EXPECT_NE(wrong_type.find("Ticket"), std::string::npos) << wrong_type;

    const std::string missing =
        error_of([] { (void)schema::from_json<SearchInput>(R"({"max_results":3})"); });
    EXPECT_NE(missing.find("$.query"), std::string::npos) << missing;
    EXPECT_NE(missing.find("required"), std::string::npos) << missing;

    const std::string range = error_of(
        [] { (void)schema::from_json<Ticket>(R"({"title":"t","priority":"LOW","small":300})"); });
    EXPECT_NE(range.find("$.small"), std::string::npos) << range;
    EXPECT_NE(range.find("outside 0..255"), std::string::npos) << range;

    const std::string not_json = error_of([] { (void)schema::from_json<SearchInput>("{"); });
    EXPECT_NE(not_json.find("not valid JSON"), std::string::npos) << not_json;

    const std::string not_object = error_of([] { (void)schema::from_json<SearchInput>("[1]"); });
    EXPECT_NE(not_object.find("at $: expected an object, got an array"), std::string::npos)
        << not_object;
}

TEST(SchemaJson, UnknownEnumValueErrorListsTheAllowedValues) {
    const std::string field =
        error_of([] { (void)schema::from_json<Ticket>(R"({"title":"t","priority":"MEDIUM"})"); });
    EXPECT_NE(field.find("$.priority"), std::string::npos) << field;
    EXPECT_NE(field.find("\"MEDIUM\""), std::string::npos) << field;
    EXPECT_NE(field.find(R"(allowed: "LOW", "HIGH", "URGENT")"), std::string::npos) << field;

    const std::string item = error_of([] {
        (void)schema::from_json<Ticket>(
            R"({"title":"t","priority":"LOW","escalations":["HIGH","low"]})");
    });
    EXPECT_NE(item.find("$.escalations[1]"), std::string::npos) << item;
    EXPECT_NE(item.find(R"(allowed: "LOW", "HIGH", "URGENT")"), std::string::npos) << item;
}

TEST(SchemaJson, WritingAnUndeclaredEnumValueNamesThePath) {
    Ticket t;
    t.priority = static_cast<Priority>(42);
    const std::string message = error_of([&t] { (void)schema::to_json(t); });
    EXPECT_NE(message.find("$.priority"), std::string::npos) << message;
}

TEST(SchemaGeneration, ATypeThatContainsItselfRendersItsInnerOccurrenceAsAPlainObject) {
    const auto doc = parse(schema::json_schema<TreeNode>());
    const auto& items = doc["properties"]["children"]["items"];
    EXPECT_STREQ(items["type"].GetString(), "object");
    EXPECT_FALSE(items.HasMember("properties"));
    EXPECT_EQ(schema::notation<TreeNode>(),
              "label: @type string @required\n"
              "children: @type array\n"
              "  @items @type object");

    TreeNode tree{"root", {TreeNode{"a", {TreeNode{"a1", {}}}}, TreeNode{"b", {}}}};
    const std::string json = schema::to_json(tree);
    EXPECT_EQ(
        json,
        R"({"label":"root","children":[{"label":"a","children":[{"label":"a1","children":[]}]},)"
        R"({"label":"b","children":[]}]})");
    EXPECT_EQ(schema::to_json(schema::from_json<TreeNode>(json)), json);
}

TEST(SchemaGeneration, ToolDefinitionFromAnInputStruct) {
    const ToolDefinitionBlock def =
        tool_definition<SearchInput>("search_documents", "Search for relevant documents");
    EXPECT_EQ(def.name, "search_documents");
    EXPECT_EQ(def.description, "Search for relevant documents");
    EXPECT_EQ(def.schema_json, schema::json_schema<SearchInput>());
}

TEST(SchemaNotation, SearchInputInTheNotation) {
    EXPECT_EQ(schema::notation<SearchInput>(),
              "query: @type string @required\n"
              "  @description The search query\n"
              "max_results: @type integer\n"
              "  @description Maximum results to return (1-100)");
}

TEST(SchemaNotation, EnumIsTypeEnumWithTheConstantsUnderValues) {
    // tools.33: "In the notation the same field is @type enum with the constants under @values".
    const std::string text = schema::notation<Ticket>();
    EXPECT_NE(text.find("priority: @type enum @required\n"
                        "  @examples \"HIGH\"\n"
                        "  @values \"LOW\", \"HIGH\", \"URGENT\"\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("escalations: @type array\n"
                        "  @items @type enum\n"
                        "    @values \"LOW\", \"HIGH\", \"URGENT\"\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("previous: @type array\n"
                        "  @items @type object\n"
                        "    street: @type string @required\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("internal_note"), std::string::npos);
}

TEST(SchemaNotation, LegendMentionsEveryKeywordTheNotationUses) {
    // tools.33: the constants under @values, which the legend (notation_legend()) explains.
    const std::string legend = schema::notation_legend();
    ASSERT_FALSE(legend.empty());
    std::set<std::string> used;
    const std::regex keyword("@[a-z]+");
    std::vector<std::string> rendered = {schema::notation<SearchInput>(),
                                         schema::notation<Ticket>()};
    const ThinkingResponseHandler<Verdict> handler;
    for (bool native : {false, true}) {
        for (bool thinking : {false, true}) {
            rendered.push_back(handler.response_instructions(native, thinking));
        }
    }
    for (const std::string& text : rendered) {
        for (auto it = std::sregex_iterator(text.begin(), text.end(), keyword);
             it != std::sregex_iterator(); ++it) {
            used.insert(it->str());
        }
    }
    // The notation really uses its whole vocabulary in these renderings.
    EXPECT_EQ(used, (std::set<std::string>{"@type", "@required", "@description", "@examples",
                                           "@values", "@items"}));
    for (const std::string& k : used) {
        EXPECT_NE(legend.find(k), std::string::npos) << k << " is not explained by the legend";
    }
}

}  // namespace
}  // namespace nucleo::test
