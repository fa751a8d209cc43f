// The module graph of docs/ARCHITECTURE.md ("Allowed includes") against every #include under
// src/ and engine/: an upward or undeclared edge fails, naming the file, the line and the edge.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Graph = std::map<std::string, std::set<std::string>>;

// "src/solver" for src/solver/estimate.cpp, "engine/(root)" for engine/engine.cpp.
std::string module_of_path(const std::string& relative) {
  const auto first = relative.find('/');
  const auto second = relative.find('/', first + 1);
  if (second == std::string::npos) return relative.substr(0, first) + "/(root)";
  return relative.substr(0, second);
}

// The module an include names: "engine/kv/kv_pages.hpp" -> engine/kv, "engine/engine.hpp" ->
// engine/(root), "solver/plan.hpp" -> src/solver (src/ is the include root).
std::string module_of_include(const std::string& include) {
  const auto slash = include.find('/');
  if (slash == std::string::npos) return "";  // same folder
  if (include.starts_with("engine/")) {
    const auto next = include.find('/', slash + 1);
    return next == std::string::npos ? "engine/(root)" : include.substr(0, next);
  }
  return "src/" + include.substr(0, slash);
}

Graph parse_allowed(const std::string& architecture) {
  Graph g;
  std::istringstream in(architecture);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("<!-- layering begin -->") != std::string::npos) { inside = true; continue; }
    if (line.find("<!-- layering end -->") != std::string::npos) break;
    if (!inside) continue;
    std::istringstream words(line);
    std::string module;
    if (!(words >> module) || module.back() != ':') continue;
    module.pop_back();
    auto& deps = g[module];
    for (std::string dep; words >> dep;) deps.insert(dep);
  }
  return g;
}

// Every module reachable from `module` (itself excluded unless a cycle brings it back).
std::set<std::string> reachable(const Graph& g, const std::string& module) {
  std::set<std::string> seen;
  std::vector<std::string> todo{module};
  while (!todo.empty()) {
    const std::string m = todo.back();
    todo.pop_back();
    const auto it = g.find(m);
    if (it == g.end()) continue;
    for (const auto& d : it->second)
      if (seen.insert(d).second) todo.push_back(d);
  }
  return seen;
}

struct Include {
  std::string file;  // relative to the repository
  std::size_t line = 0;
  std::string target;
};

std::vector<std::string> violations(const Graph& allowed, const std::vector<Include>& includes) {
  std::vector<std::string> out;
  std::map<std::string, std::set<std::string>> closure;
  for (const auto& inc : includes) {
    const std::string from = module_of_path(inc.file), to = module_of_include(inc.target);
    if (to.empty() || to == from) continue;
    if (!allowed.count(from)) {
      out.push_back(inc.file + ": module " + from + " is not in the graph");
      continue;
    }
    if (!closure.count(from)) closure[from] = reachable(allowed, from);
    if (!closure[from].count(to))
      out.push_back(inc.file + ":" + std::to_string(inc.line) + ": " + from + " -> " + to + " (#include \"" + inc.target + "\")");
  }
  return out;
}

std::vector<Include> scan(const fs::path& root) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<Include> out;
  for (const char* top : {"src", "engine"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      std::ifstream in(e.path());
      std::string line;
      for (std::size_t n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (std::regex_search(line, m, include))
          out.push_back({fs::relative(e.path(), root).generic_string(), n, m[1]});
      }
    }
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("layering: the graph's rules catch an upward or undeclared include", "[layering]") {
  const Graph g = parse_allowed(
      "<!-- layering begin -->\n    src/types:\n    src/io: src/types\n    src/solver: src/io\n<!-- layering end -->\n");
  REQUIRE(g.size() == 3);
  CHECK(violations(g, {{"src/solver/a.cpp", 1, "io/csv.hpp"}, {"src/solver/a.cpp", 2, "types/result.hpp"}}).empty());
  // Upward: types must not include io.
  const auto up = violations(g, {{"src/types/t.cpp", 7, "io/csv.hpp"}});
  REQUIRE(up.size() == 1);
  CHECK(up[0] == "src/types/t.cpp:7: src/types -> src/io (#include \"io/csv.hpp\")");
  // Undeclared module, and same-folder includes are no edge.
  CHECK(violations(g, {{"src/gate/g.cpp", 1, "io/csv.hpp"}}).size() == 1);
  CHECK(violations(g, {{"src/io/x.cpp", 1, "csv.hpp"}, {"src/io/x.cpp", 2, "io/csv.hpp"}}).empty());
  CHECK(module_of_include("engine/engine.hpp") == "engine/(root)");
  CHECK(module_of_include("engine/kv/kv_pages.hpp") == "engine/kv");
  CHECK(module_of_path("engine/engine.cpp") == "engine/(root)");
}

TEST_CASE("layering: every include in src/ and engine/ follows docs/ARCHITECTURE.md", "[layering]") {
  const fs::path root = TRILEMMA_SOURCE_DIR;
  const Graph allowed = parse_allowed(read(root / "docs/ARCHITECTURE.md"));
  REQUIRE(allowed.size() >= 20);
  // The engine depends on nothing in src/ but the shared plain types.
  for (const auto& [module, deps] : allowed)
    if (module.starts_with("engine/"))
      for (const auto& d : reachable(allowed, module)) CHECK((d.starts_with("engine/") || d == "src/types"));
  // No module reaches itself: the graph is a hierarchy.
  for (const auto& [module, deps] : allowed) {
    CAPTURE(module);
    CHECK_FALSE(reachable(allowed, module).count(module));
  }
  const auto includes = scan(root);
  CHECK(includes.size() > 500);
  const auto bad = violations(allowed, includes);
  for (const auto& v : bad) UNSCOPED_INFO(v);
  CHECK(bad.empty());
}
