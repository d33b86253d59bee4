// The README's host program: one question to a model, its answer and its cost. No depth or
// output length is declared, so the config's `defaults:` apply (IMMEDIATE, MEDIUM).
#include <iostream>

#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

int main(int argc, char** argv) {
    const auto config = nucleo::Config::load(argc > 1 ? argv[1] : nucleo::Config::default_path());
    const nucleo::ModelSpec& model = config.catalog().find("claude-sonnet-5-5");
    auto client = nucleo::ProviderClient::from_config(config, nucleo::PluginLoader(config.plugin_paths()),
                                                      model.provider);
    nucleo::ConversationContext conversation("hello-1", "alice");
    conversation.add_message(nucleo::Message::outgoing_text("Why is the sky blue?"));
    const nucleo::LLMResponse answer = client.call(conversation, model);
    for (const auto& block : answer.message.blocks)
        if (const auto* text = std::get_if<nucleo::TextBlock>(&block.value)) std::cout << text->text << "\n";
    std::cout << "cost $" << answer.cost << "\n";
}
