#!/usr/bin/env bash
# Fetches the registry packages the structural-search parity tests read
# (tests/it/ast/parity/registry.rs) and the mixed-language benchmark walks:
# real code in 21 languages, none of it written here, and two real projects
# (rich, rxjs) the language-server tests work on. Idempotent: a
# language already extracted is left alone. Nothing is installed system-wide;
# each package is unpacked under $TETHER_CORPORA (default
# ~/.cache/tether-test/corpora)/<language>/.
#
# Usage: scripts/corpora.sh [language ...]   (default: all)
# Needs: apt-get and dpkg-deb (Debian), npm, python3 -m pip, curl, unzip.
set -euo pipefail

C=${TETHER_CORPORA:-$HOME/.cache/tether-test/corpora}

# A Debian package, pinned; a pinned point release that left the mirror
# falls back to the version the mirror has.
deb() { # language package version
  local d=$C/$1 p=$2 v=$3
  mkdir -p "$d" && cd "$d"
  ls "$p"_*.deb >/dev/null 2>&1 || apt-get download -q "$p=$v" 2>/dev/null || apt-get download -q "$p"
  [ -d out ] || { rm -rf out.tmp && dpkg-deb -x "$p"_*.deb out.tmp && mv out.tmp out; }
}

npm_package() { # language package version
  local d=$C/$1 p=$2 v=$3
  mkdir -p "$d" && cd "$d"
  local f; f=$(echo "$p" | sed 's/^@//; s#/#-#')-$v.tgz
  [ -f "$f" ] || npm pack -q "$p@$v" >/dev/null
  [ -d out ] || { rm -rf out.tmp && mkdir out.tmp && tar xzf "$f" -C out.tmp && mv out.tmp out; }
}

sdist() { # language package version   (PyPI source distribution)
  local d=$C/$1 p=$2 v=$3
  mkdir -p "$d" && cd "$d"
  ls ./*"$v".tar.gz >/dev/null 2>&1 \
    || python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: "$p==$v" -d .
  [ -d out ] || { rm -rf out.tmp && mkdir out.tmp && tar xzf ./*"$v".tar.gz -C out.tmp && mv out.tmp out; }
}

wheel() { # language package version   (PyPI wheel)
  local d=$C/$1 p=$2 v=$3
  mkdir -p "$d" && cd "$d"
  ls ./*"$v"-*.whl >/dev/null 2>&1 \
    || python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: "$p==$v" -d .
  [ -d out ] || { rm -rf out.tmp && unzip -q ./*"$v"-*.whl -d out.tmp && mv out.tmp out; }
}

crate() { # language name version   (crates.io's static download host)
  local d=$C/$1 n=$2 v=$3
  mkdir -p "$d" && cd "$d"
  [ -f "$n-$v.crate" ] || curl -fsSL -o "$n-$v.crate.tmp" "https://static.crates.io/crates/$n/$n-$v.crate" \
    && { [ -f "$n-$v.crate" ] || mv "$n-$v.crate.tmp" "$n-$v.crate"; }
  [ -d out ] || { rm -rf out.tmp && mkdir out.tmp && tar xzf "$n-$v.crate" -C out.tmp && mv out.tmp out; }
}

fetch() {
  case $1 in
    bash)     deb bash dracut-core 059-4 ;;
    csharp)   sdist csharp pythonnet 3.0.5 ;;
    css)      npm_package css tachyons 4.12.0 ;;
    dart)     crate dart flutter_rust_bridge_codegen 2.13.0 ;;
    fastapi)  sdist fastapi fastapi 0.115.0 ;;  # Python: call hierarchy on a real project
    rich)     sdist rich rich 15.0.0 ;;  # Python: answers about exactly what was asked, write deltas
    rxjs)     npm_package rxjs rxjs 7.8.2 ;;  # TypeScript: the same, in a large real project
    elixir)   npm_package elixir @snyk/snyk-hex-plugin 2.2.2 ;;
    haskell)  deb haskell libhugs-base-bundled 98.200609.21-6+b1 ;;
    hcl)      deb hcl golang-github-hashicorp-terraform-json-dev 0.5.0-3 ;;
    html)     deb html git-doc 1:2.39.5-0+deb12u3 ;;
    java)     npm_package java @capacitor/android 6.2.0 ;;
    json)     npm_package json cldr-core 44.1.0 ;;
    kotlin)   npm_package kotlin expo-modules-core 2.2.3 ;;
    lua)      deb lua lua-penlight 1.13.1-3 ;;
    markdown) npm_package markdown eslint-plugin-import 2.31.0 ;;
    nix)      crate nix nixpkgs-fmt 1.3.0 ;;
    php)      deb php php-pear 1:1.10.13+submodules+notgz+2022032202-2 ;;
    ruby)     deb ruby libruby3.1 3.1.7+really3.1.2-0+deb12u1 ;;
    scala)    # The lessons' Scala solutions sit inside the package's jar.
              deb scala plm 2.9.2-1
              [ -d "$C/scala/src" ] || {
                cd "$C/scala" && rm -rf src.tmp \
                  && unzip -q -o out/usr/share/java/plm-2.9.2.jar 'lessons/*.scala' -d src.tmp && mv src.tmp src
              } ;;
    solidity) npm_package solidity @openzeppelin/contracts 5.0.2 ;;
    swift)    npm_package swift expo-modules-core 2.2.3 ;;
    yaml)     sdist yaml ansible-core 2.16.14 ;;
    zig)      wheel zig ziggy-pydust 0.26.0 ;;
    *) echo "corpora.sh: no corpus is known for \`$1\`" >&2; return 1 ;;
  esac
}

languages=("$@")
[ ${#languages[@]} -gt 0 ] || languages=(bash csharp css dart elixir fastapi haskell hcl html java json kotlin lua markdown nix php rich ruby rxjs scala solidity swift yaml zig)
for language in "${languages[@]}"; do
  ( fetch "$language" ) || { echo "corpora.sh: fetching the $language corpus failed" >&2; exit 1; }
done
