// A loopback HTTP server that answers every request with one fixed body (status 200): a hostile
// provider for answers the emulator cannot carry (its canned answers travel in a request header,
// whose size the HTTP server caps). One thread; each connection is read up to the end of its
// body, answered and closed. Stops (and joins) when destroyed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace nucleo::test_support {

class FixedReplyServer {
  public:
    FixedReplyServer(std::string body, std::string content_type = "application/json")
        : body_(std::move(body)), content_type_(std::move(content_type)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listener_ < 0) throw std::runtime_error("socket failed");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener_, 16) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            ::close(listener_);
            throw std::runtime_error("bind/listen failed");
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~FixedReplyServer() {
        stop_ = true;
        thread_.join();
        ::close(listener_);
    }
    FixedReplyServer(const FixedReplyServer&) = delete;
    FixedReplyServer& operator=(const FixedReplyServer&) = delete;

    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    [[nodiscard]] int requests() const { return requests_; }

  private:
    void serve() {
        while (!stop_) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int conn = ::accept(listener_, nullptr, nullptr);
            if (conn < 0) continue;
            answer(conn);
            ::close(conn);
        }
    }

    void answer(int conn) {
        std::string request;
        char buf[8192];
        std::size_t need = std::string::npos;
        while (!stop_) {
            pollfd p{conn, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
            if (n <= 0) return;
            request.append(buf, static_cast<std::size_t>(n));
            const std::size_t end = request.find("\r\n\r\n");
            if (end == std::string::npos) continue;
            if (need == std::string::npos) {
                std::size_t length = 0;
                for (const char* name : {"Content-Length:", "content-length:"}) {
                    if (const auto at = request.find(name); at != std::string::npos && at < end) {
                        length = std::strtoul(request.c_str() + at + std::string(name).size(), nullptr, 10);
                    }
                }
                need = end + 4 + length;
            }
            if (request.size() >= need) break;
        }
        ++requests_;
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: " + content_type_ +
                                  "\r\nContent-Length: " + std::to_string(body_.size()) +
                                  "\r\nConnection: close\r\n\r\n" + body_;
        std::size_t sent = 0;
        while (sent < reply.size() && !stop_) {
            const ssize_t n = ::send(conn, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return;
            sent += static_cast<std::size_t>(n);
        }
    }

    std::string body_;
    std::string content_type_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> requests_{0};
    std::thread thread_;
};

}  // namespace nucleo::test_support
