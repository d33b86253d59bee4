// `nucleo transcript --in CONV.json`: the conversation as a reader other than its model sees it
// (conversation.33).
#include <iostream>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_input.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli {

int run_transcript(const Argv& argv) {
    Args args(argv, {});
    args.allow_only({"in"});
    std::cout << Transcript::render(load_conversation(args.require("in")));
    return kExitOk;
}

}  // namespace nucleo::cli
