// `nucleo transcript --in CONV.json`: the conversation as a reader other than its model sees it
// (conversation.33).
#include <iostream>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_input.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli {
namespace {

int run_transcript(const Args& args) {
    std::cout << Transcript::render(load_conversation(args.require("in")));
    return kExitOk;
}

}  // namespace

const CommandSpec& transcript_command() {
    static const CommandSpec spec{
        "transcript",
        "print a conversation as text for a reader",
        {{"--in", "FILE", "a conversation document v1 (docs/conversation-document.md); - reads stdin"}},
        "",
        "",
        "The transcript is text for a person; `nucleo conversations export` gives the document.",
        run_transcript};
    return spec;
}

}  // namespace nucleo::cli
