// A hostile HTTP server on loopback for transport tests: it answers every connection with one
// scripted behaviour (stall, drip, an endless body, ...) and counts what it saw. It runs on its own
// thread and stops when destroyed (the listening socket is shut down, every client socket closed).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nucleo::testing {

class HostileServer {
public:
    /// What the server does with one accepted connection, after reading its request. `send`
    /// writes bytes and returns false once the client is gone; `stopping` turns true at teardown.
    struct Client {
        std::function<bool(std::string_view)> send;
        std::function<bool()> stopping;
        std::string request;  ///< the request as read: its head and its body (Content-Length)
    };
    using Behaviour = std::function<void(Client&)>;

    explicit HostileServer(Behaviour behaviour, int backlog = 16) : behaviour_(std::move(behaviour)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listener_ < 0) throw std::runtime_error("socket failed");
        const int one = 1;
        ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener_, backlog) != 0)
            throw std::runtime_error("bind/listen failed");
        socklen_t len = sizeof addr;
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        if (behaviour_) thread_ = std::thread([this] { serve(); });
    }

    ~HostileServer() {
        stop_.store(true);
        ::shutdown(listener_, SHUT_RDWR);
        if (thread_.joinable()) thread_.join();
        for (std::thread& t : clients_)
            if (t.joinable()) t.join();
        ::close(listener_);
    }

    HostileServer(const HostileServer&) = delete;
    HostileServer& operator=(const HostileServer&) = delete;

    [[nodiscard]] std::string url(std::string_view path = "/v1/messages") const {
        return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
    }
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// Connections accepted so far (one per attempt of the client).
    [[nodiscard]] int connections() const noexcept { return connections_.load(); }
    /// Body bytes the server managed to write before the client went away.
    [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return sent_.load(); }

private:
    void serve() {
        while (!stop_.load()) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int fd = ::accept(listener_, nullptr, nullptr);
            if (fd < 0) continue;
            connections_.fetch_add(1);
            clients_.emplace_back([this, fd] { handle(fd); });
        }
    }

    void handle(int fd) {
        // Read the request head and its body (Content-Length), so the client's send completes.
        std::string in;
        char buf[4096];
        std::size_t need = std::string::npos;
        while (!stop_.load()) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            in.append(buf, static_cast<std::size_t>(n));
            const std::size_t head = in.find("\r\n\r\n");
            if (head == std::string::npos) continue;
            if (need == std::string::npos) {
                std::size_t length = 0;
                const std::size_t cl = in.find("ontent-Length:");
                if (cl != std::string::npos && cl < head) length = std::stoul(in.substr(cl + 14));
                need = head + 4 + length;
            }
            if (in.size() >= need) break;
        }
        Client client;
        client.send = [this, fd](std::string_view bytes) {
            while (!bytes.empty()) {
                const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
                if (n <= 0) return false;
                sent_.fetch_add(static_cast<std::uint64_t>(n));
                bytes.remove_prefix(static_cast<std::size_t>(n));
            }
            return true;
        };
        client.stopping = [this] { return stop_.load(); };
        client.request = std::move(in);
        behaviour_(client);
        ::close(fd);
    }

    Behaviour behaviour_;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::atomic<std::uint64_t> sent_{0};
    std::thread thread_;
    std::vector<std::thread> clients_;
};

/// Waits, without spinning, until `stopping()` or the client is gone; what a stalled server does.
inline void hold(HostileServer::Client& c) {
    while (!c.stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace nucleo::testing
