# Sourced by the scripts that start servers on loopback (compare.sh, scale-run.sh).
# free_port: prints a loopback port in 20000-49999 that nothing answers on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
