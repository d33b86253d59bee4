// Shared by the service tests: a thinker with unique job and workflow ids.
#pragma once

#include <memory>
#include <string>

#include "nucleo/thinker.hpp"
#include "support.hpp"

namespace service_test {

/// A thinker `name` of `user`, with a job id and a workflow id no other test uses.
inline std::shared_ptr<nucleo::Thinker> thinker(const std::string& name,
                                                const std::string& user = "alice") {
    auto t = std::make_shared<nucleo::Thinker>();
    t->name = name;
    t->job_id = store_test::unique(name + "-job");
    t->user_id = user;
    t->workflow_id = store_test::unique(name + "-wf");
    return t;
}

}  // namespace service_test
