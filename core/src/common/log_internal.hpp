// Internal logging helpers: fmt-style formatting onto the runtime's single spdlog logger.
#pragma once

#include <spdlog/spdlog.h>

#include "nucleo/log.hpp"

namespace nucleo::internal {

/// The runtime's logger; every record passes through the sink chosen by nucleo::log::set_sink.
spdlog::logger& logger();

}  // namespace nucleo::internal

#define NUCLEO_LOG_TRACE(...) ::nucleo::internal::logger().trace(__VA_ARGS__)
#define NUCLEO_LOG_DEBUG(...) ::nucleo::internal::logger().debug(__VA_ARGS__)
#define NUCLEO_LOG_INFO(...) ::nucleo::internal::logger().info(__VA_ARGS__)
#define NUCLEO_LOG_WARN(...) ::nucleo::internal::logger().warn(__VA_ARGS__)
#define NUCLEO_LOG_ERROR(...) ::nucleo::internal::logger().error(__VA_ARGS__)
