// cli.104: what a person at a terminal sees while a one-shot command waits for its first answer
// text: one line on stderr, redrawn in place, saying what the call is doing (connecting, a rate
// limit wait, a retry: the call's progress, obs.104), erased as soon as the answer begins or the
// call ends. Nothing when stderr is not a terminal, so scripts and logs never see it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace nucleo::cli {

class Spinner {
  public:
    /// Starts drawing `what` ("waiting for claude-sonnet-5-5") when `enabled`.
    Spinner(bool enabled, std::string what);
    /// Stops and erases the line.
    ~Spinner();
    Spinner(const Spinner&) = delete;
    Spinner& operator=(const Spinner&) = delete;

    /// Replaces the text after the frame (the call's progress); any thread.
    void say(std::string what);
    /// Stops and erases the line; idempotent. After it, the caller may write to the terminal.
    void stop();

  private:
    void draw_loop();

    std::mutex mutex_;
    std::condition_variable wake_;
    std::string what_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace nucleo::cli
