#include "cli/app.hpp"

int main(int argc, char** argv) { return trilemma::cli::run(argc, argv); }
