// cli.104: the waiting line of a one-shot command (spinner.hpp).
#include "commands/spinner.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

namespace nucleo::cli {

Spinner::Spinner(bool enabled, std::string what) : what_(std::move(what)) {
    if (enabled) thread_ = std::thread([this] { draw_loop(); });
}

Spinner::~Spinner() {
    stop();
}

void Spinner::say(std::string what) {
    const std::lock_guard lock(mutex_);
    what_ = std::move(what);
    wake_.notify_one();
}

void Spinner::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
        wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
}

void Spinner::draw_loop() {
    // Braille frames, as most terminal spinners use; each frame is one column wide.
    static const char* const kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
    std::size_t frame = 0;
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // \r and erase-line: the line is redrawn in place; stderr is unbuffered.
        std::fprintf(stderr, "\r\033[K%s %s", kFrames[frame], what_.c_str());
        frame = (frame + 1) % (sizeof kFrames / sizeof kFrames[0]);
        wake_.wait_for(lock, std::chrono::milliseconds(100));
    }
    std::fputs("\r\033[K", stderr);
}

}  // namespace nucleo::cli
