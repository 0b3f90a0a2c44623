// What a `docker buildx bake --progress plain` is doing, read from its output line by line, in
// the terms of sagebuild's progress: the step each target is on ("toolkit 1/1: RUN case ..."),
// and the phases of the `sagebuild build` running inside a target's image. The raw lines stay in
// build/logs/docker-bake.log (and on the console with --verbose).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sagebuild::backend {

struct BakeStep {
  std::string target;  // a bake target: the entry id
  std::string step;    // "toolkit 1/1: RUN case ...", or "in the image: kernels (120 s)"
};

class BakeProgressReader {
 public:
  explicit BakeProgressReader(std::set<std::string> targets) : targets_(std::move(targets)) {}

  // One line of output; the step it starts, if it starts one. BuildKit's plain form:
  //   #12 [linux-sage2-x toolkit 2/3] RUN apt-get update ...   a step of target linux-sage2-x
  //   #12 41.07 [linux-sage2-x] kernels (12 s)                 vertex 12's output: here the
  //                                                            inner sagebuild's progress
  //   #12 DONE 602.1s / #12 CACHED                             the step ended
  std::optional<BakeStep> feed(std::string_view line);

 private:
  std::set<std::string> targets_;
  std::map<int, std::string> vertex_target_;  // vertex number -> the target it was started for
};

}  // namespace sagebuild::backend
