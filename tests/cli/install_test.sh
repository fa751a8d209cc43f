#!/bin/sh
# `cmake --install` into a fresh prefix: the binary runs from there (its data is compiled in) and
# the three completion scripts and the man page are where bash-completion, zsh, fish and man look
# (issue 50).
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
grep -q "^.TH TRILEMMA 1" "$prefix/share/man/man1/trilemma.1" || fail "man page"
if command -v man >/dev/null 2>&1; then
  MANWIDTH=100 man -l "$prefix/share/man/man1/trilemma.1" 2>/dev/null | grep -q "EXIT STATUS" || fail "man cannot render the page"
else
  echo "install_test: man is not installed here: the page's rendering is not checked (its macros are, in cli_test)"
fi
echo "install_test: binary, completions and man page installed under a fresh prefix"
