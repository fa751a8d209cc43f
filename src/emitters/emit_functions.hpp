// The emitters' entry points, one per file; only emitter_table.cpp lists them.
#pragma once
#include "emitters/emitter.hpp"

namespace trilemma::emitters {

Result<Emission> emit_llama_cpp(const solver::PlanDocument& plan);   // llama_cpp_emitter.cpp
Result<Emission> emit_ollama(const solver::PlanDocument& plan);      // ollama_emitter.cpp
Result<Emission> emit_mlc_llm(const solver::PlanDocument& plan);     // mlc_emitter.cpp
Result<Emission> emit_plan_json(const solver::PlanDocument& plan);   // plan_emitters.cpp
Result<Emission> emit_plan_yaml(const solver::PlanDocument& plan);   // plan_emitters.cpp

}  // namespace trilemma::emitters
