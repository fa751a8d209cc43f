#!/bin/sh
# `cmake --install` into a fresh prefix: the binary runs from there (its data is compiled in) and
# the three completion scripts are where bash-completion, zsh and fish look (issue 50).
#   install_test.sh CMAKE BUILD_DIR
set -eu
cmake="$1" build="$2"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
fail() { echo "install_test: $*" >&2; exit 1; }
[ -x "$prefix/bin/trilemma" ] || fail "no bin/trilemma"
"$prefix/bin/trilemma" devices show raspberry-pi-5 | grep -q "Raspberry Pi 5" || fail "the installed binary does not read its data"
grep -q "complete -o filenames -F _trilemma trilemma" "$prefix/share/bash-completion/completions/trilemma" || fail "bash completion"
grep -q "bashcompinit" "$prefix/share/zsh/site-functions/_trilemma" || fail "zsh completion"
grep -q "complete -c trilemma" "$prefix/share/fish/vendor_completions.d/trilemma.fish" || fail "fish completion"
echo "install_test: binary and completions installed under a fresh prefix"
