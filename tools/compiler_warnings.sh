# Sourced by .ci/run, tools/pg_test.sh and tools/thread_sanitizer.sh: one definition of
# what a compiler warning is in a build's output.
# compiler_warnings LOG — prints the Swift compiler's warnings in LOG; true when there are any.
compiler_warnings() {
    grep -E "(^|/)[^ ]+\.swift:[0-9]+:[0-9]+: warning:" "$1"
}
