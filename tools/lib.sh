# Shared by the scripts in tools/: source it after setting `me` (the name
# the script's messages start with).

# Exits 77 (what ctest reports as skipped), saying why, unless run as root.
skip_unless_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "$me: skipped: $1 needs root, and this runs as $(id -un)"
    exit 77
  fi
}

# Exits 1 naming the first of the given commands that is missing.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$me: $tool is missing (bash tools/setup.sh installs it)" >&2; exit 1; }
  done
}

# A ClickHouse server of its own in folder $1 (Debian's clickhouse-server,
# a minimal config, loopback only, random ports): sets clickhouse_http,
# clickhouse_https and clickhouse_tcp; HTTPS with a certificate for
# 127.0.0.1 made here, $1/cert.pem. clickhouse_start [PREFIX...] starts it (under PREFIX, e.g.
# nice) and waits until it answers, setting clickhouse_pid;
# clickhouse_kill kills it as a crash would (SIGKILL). clickhouse_query SQL.
clickhouse_setup() {
  clickhouse_dir=$1
  clickhouse_pid=
  clickhouse_http=$((20000 + RANDOM % 20000))
  clickhouse_tcp=$((clickhouse_http + 1))
  clickhouse_https=$((clickhouse_http + 2))
  mkdir -p "$clickhouse_dir/data" "$clickhouse_dir/tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$clickhouse_dir/key.pem" -out "$clickhouse_dir/cert.pem" 2>/dev/null
  cat > "$clickhouse_dir/config.xml" <<XML
<yandex>
  <logger><level>warning</level><log>$clickhouse_dir/server.log</log><errorlog>$clickhouse_dir/error.log</errorlog></logger>
  <http_port>$clickhouse_http</http_port>
  <tcp_port>$clickhouse_tcp</tcp_port>
  <https_port>$clickhouse_https</https_port>
  <openSSL><server>
    <certificateFile>$clickhouse_dir/cert.pem</certificateFile><privateKeyFile>$clickhouse_dir/key.pem</privateKeyFile>
    <verificationMode>none</verificationMode><loadDefaultCAFile>false</loadDefaultCAFile>
  </server></openSSL>
  <listen_host>127.0.0.1</listen_host>
  <path>$clickhouse_dir/data/</path>
  <tmp_path>$clickhouse_dir/tmp/</tmp_path>
  <users_config>$clickhouse_dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>536870912</mark_cache_size>
</yandex>
XML
  cat > "$clickhouse_dir/users.xml" <<'XML'
<yandex><profiles><default/></profiles><users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default/></quotas></yandex>
XML
}
clickhouse_query() { clickhouse-client --host 127.0.0.1 --port "$clickhouse_tcp" --query "$1"; }
clickhouse_start() {
  "$@" clickhouse-server --config-file="$clickhouse_dir/config.xml" >/dev/null 2>&1 &
  clickhouse_pid=$!
  for _ in $(seq 300); do clickhouse_query 'SELECT 1' >/dev/null 2>&1 && return; sleep 0.1; done
  echo "$me: the ClickHouse server did not start"; cat "$clickhouse_dir/error.log"; exit 1
}
clickhouse_kill() {
  kill -9 "$clickhouse_pid" 2>/dev/null; wait "$clickhouse_pid" 2>/dev/null || true
}
