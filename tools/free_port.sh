# Sourced by the scripts that start servers on loopback (compare.sh, scale-run.sh).
# free_port: prints a loopback port that nothing answers on, from 20000 up to the kernel's
# ephemeral range (where outgoing connections take their ports, and could take this one).
free_port() {
  local p low
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  [ "$low" -gt 21000 ] 2>/dev/null || low=32768
  while :; do
    p=$((20000 + RANDOM % (low - 20000)))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
