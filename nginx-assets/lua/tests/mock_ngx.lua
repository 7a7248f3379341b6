-- A mocked `ngx` for unit tests of Portico's Lua modules under plain luajit (no nginx). Shared dicts account for
-- memory like nginx's: a value that does not fit makes safe_set/safe_add fail with "no memory" — after the old
-- entry of that key was freed, as nginx does — and the evicting `set`/`add` are refused outright so a module that
-- still uses them fails its tests. Entries may expire (exptime in seconds, as nginx's) on the test's clock
-- (T.clock, which ngx.now() returns): an expired entry reads as missing.
-- Usage: local T = require("mock_ngx").fresh({ data = bytes, certs = bytes, health = bytes }).
local M = {}

local Dict = {}
Dict.__index = Dict

local function cost(k, v)
  return #k + (type(v) == "string" and #v or 8) + 16
end

-- clock: a function returning the current time in seconds (fresh() passes the test's clock).
function M.dict(capacity, clock)
  return setmetatable({ data = {}, expires = {}, used = 0, capacity = capacity or 64 * 1024 * 1024, clock = clock or os.time }, Dict)
end

-- Drops k if it has expired (nginx hides expired entries and frees them lazily).
local function reap(self, k)
  local e = self.expires[k]
  if e and e <= self.clock() then self:delete(k) end
end

function Dict:get(k)
  reap(self, k)
  return self.data[k]
end

-- As nginx's: 0 for a key without expiry, else the seconds left; nil and "not found" for a missing one (the
-- value is not copied).
function Dict:ttl(k)
  reap(self, k)
  if self.data[k] == nil then return nil, "not found" end
  local e = self.expires[k]
  if not e then return 0 end
  return e - self.clock()
end

-- As nginx's: sets the expiry of an existing key (0 = never).
function Dict:expire(k, exptime)
  reap(self, k)
  if self.data[k] == nil then return nil, "not found" end
  self.expires[k] = (exptime and exptime > 0) and (self.clock() + exptime) or nil
  return true
end

function Dict:delete(k)
  local old = self.data[k]
  if old ~= nil then
    self.used = self.used - cost(k, old)
    self.data[k] = nil
  end
  self.expires[k] = nil
end

function Dict:safe_set(k, v, exptime)
  if v == nil then self:delete(k); return true end
  self:delete(k)
  local need = cost(k, v)
  if self.used + need > self.capacity then return false, "no memory" end
  self.data[k] = v
  self.used = self.used + need
  if exptime and exptime > 0 then self.expires[k] = self.clock() + exptime end
  return true
end

function Dict:safe_add(k, v, exptime)
  reap(self, k)
  if self.data[k] ~= nil then return false, "exists" end
  return self:safe_set(k, v, exptime)
end

function Dict.set() error("dict:set evicts other entries when the zone is full; use safe_set", 2) end
function Dict.add() error("dict:add evicts other entries when the zone is full; use safe_add", 2) end

-- As nginx's: init_ttl only applies when the key is created; an existing key keeps its expiry.
function Dict:incr(k, n, init, init_ttl)
  reap(self, k)
  local v = self.data[k]
  local exp = self.expires[k]
  if v == nil then
    if init == nil then return nil, "not found" end
    v = init
    exp = (init_ttl and init_ttl > 0) and (self.clock() + init_ttl) or nil
  end
  local ok, err = self:safe_set(k, v + n)
  if not ok then return nil, err end
  self.expires[k] = exp
  return v + n
end

function Dict:get_keys(max)
  local out = {}
  for k in pairs(self.data) do
    local e = self.expires[k]
    if not e or e > self.clock() then out[#out + 1] = k end
    if max and max > 0 and #out >= max then break end
  end
  table.sort(out)
  return out
end

-- Installs a fresh `ngx` and forgets every loaded portico module, so each test starts from new module state.
function M.fresh(o)
  o = o or {}
  for name in pairs(package.loaded) do
    -- (resty.lrucache stays loaded: its ffi.cdef cannot run twice in one process)
    if name:match("^portico%.") or name == "ngx.balancer" or name == "ngx.ssl" then package.loaded[name] = nil end
  end
  local T = { logs = {}, peers = {}, tries = {}, said = {}, clock = 1000 }
  local function clock() return T.clock end
  local ngx = {
    shared = {
      portico_data = M.dict(o.data, clock), portico_certs = M.dict(o.certs, clock), portico_stats = M.dict(nil, clock),
      portico_health = M.dict(o.health, clock),
    },
    -- set_by_lua's arguments, as ngx.arg[i] reads them: nil for an empty one.
    var = {}, header = {}, ctx = {}, arg = {},
    ALERT = 2, ERR = 4, WARN = 5, NOTICE = 6, INFO = 7, ERROR = -1,
    status = 0,
    null = nil,
  }
  function ngx.log(level, ...)
    local parts = {}
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    T.logs[#T.logs + 1] = { level = level, msg = table.concat(parts) }
  end
  function ngx.now() return T.clock end
  ngx.worker = { pid = function() return 4242 end }
  -- Lua patterns stand in for PCRE (tests use expressions valid in both); the "i" option is honoured.
  ngx.re = { find = function(s, p, opts)
    if opts and opts:find("i", 1, true) then return s:lower():find(p:lower()) end
    return s:find(p)
  end }
  function ngx.say(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    T.said[#T.said + 1] = table.concat(parts)
  end
  function ngx.exit(code) T.exited = code; return code end
  ngx.req = {
    read_body = function() end,
    get_body_data = function() return T.body end,
    get_body_file = function() return nil end,
    get_method = function() return T.method or "GET" end,
  }
  _G.ngx = ngx
  T.ngx = ngx
  M.http(T, ngx, o)

  package.loaded["ngx.balancer"] = {
    set_current_peer = function(addr, port)
      T.peers[#T.peers + 1] = port and (addr .. ":" .. port) or addr
      return true
    end,
    set_more_tries = function(n) T.tries[#T.tries + 1] = n; return true end,
    -- T.last_failure: "failed" / "next" (or nil on a first attempt), T.last_status: the status nginx recorded.
    get_last_failure = function() return T.last_failure, T.last_status end,
    set_timeouts = function(c, s, r) T.timeouts = { c, s, r }; return true end,
  }
  package.loaded["ngx.ssl"] = {
    server_name = function() return T.sni end,
    parse_pem_cert = function(pem) T.parsed = (T.parsed or 0) + 1; return { pem = pem } end,
    parse_pem_priv_key = function(pem) return { pem = pem } end,
    clear_certs = function() return true end,
    set_cert = function(c) T.served = c.pem; return true end,
    set_priv_key = function() return true end,
    -- The handshake asks for a client certificate with this CA chain and depth (certs.lua).
    verify_client = function(chain, depth) T.client_verify = { chain = chain, depth = depth }; return true end,
  }
  package.loaded["ngx.ssl.clienthello"] = {
    get_client_hello_server_name = function() return T.hello_sni end,
  }
  -- The TLS session's record of the client-certificate CA (tlsctx.lua uses OpenSSL through the FFI): T.tls_bound is
  -- what a request's connection was verified against; the handshake's calls are recorded.
  package.loaded["portico.tlsctx"] = {
    set_connection = function(id, prefix) T.tls_connection = id; T.tls_connection_prefix = prefix; return true end,
    -- ssl-ciphers: the list set on the connection (T.cipher_fail makes OpenSSL refuse it).
    set_ciphers = function(list)
      if T.cipher_fail then return nil, "OpenSSL matches no cipher in the list" end
      T.tls_ciphers = list
      return true
    end,
    set_session = function(id) T.tls_session = id; return true end,
    get = function() return T.tls_bound end,
  }

  -- Helpers for assertions.
  function T.logged(level, pattern)
    for _, l in ipairs(T.logs) do
      if (not level or l.level == level) and l.msg:find(pattern) then return true end
    end
    return false
  end
  return T
end

-- The request/response side of the API, for the plugin tests: request headers in T.headers (lower-case name ->
-- string or list), query arguments in T.args, `ngx.var.http_*` / `ngx.var.arg_*` read from them (unless a test
-- set the variable itself), case-insensitive response headers in ngx.header, ngx.location.capture answered by
-- T.capture(uri, opts) (each call recorded in T.captures with the request headers it carried), ngx.print into
-- T.printed, ngx.re.sub on Lua patterns, base64 and SHA-1 as nginx has them, and the rate-limit zone
-- portico_limits, whose evicting `set` is allowed (counters may be evicted; see plugins/rate_limit.lua).
local function b64enc(s)
  local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  return ((s:gsub(".", function(x)
    local r, b = "", x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return chars:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#s % 3 + 1])
end

local function b64dec(s)
  local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  if #s % 4 ~= 0 or s:find("[^%w+/=]") or s:find("=[^=]") then return nil end
  s = s:gsub("=", "")
  return (s:gsub(".", function(x)
    local r, f = "", (chars:find(x, 1, true) - 1)
    for i = 6, 1, -1 do r = r .. (f % 2 ^ i - f % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end):gsub("%d%d%d?%d?%d?%d?%d?%d?", function(x)
    if #x ~= 8 then return "" end
    local c = 0
    for i = 1, 8 do c = c + (x:sub(i, i) == "1" and 2 ^ (8 - i) or 0) end
    return string.char(c)
  end))
end
M.b64enc, M.b64dec = b64enc, b64dec

local sha1_lib
local function sha1_bin(s)
  local ffi = require("ffi")
  if not sha1_lib then
    ffi.cdef("unsigned char *SHA1(const unsigned char *d, size_t n, unsigned char *md);")
    local ok, l = pcall(ffi.load, "libcrypto.so.3")
    sha1_lib = ok and l or ffi.load("crypto")
  end
  local out = ffi.new("unsigned char[20]")
  sha1_lib.SHA1(s, #s, out)
  return ffi.string(out, 20)
end

-- As nginx's ngx.hmac_sha1 (binary HMAC-SHA1), from OpenSSL's HMAC.
local hmac_lib
local function hmac_sha1(key, s)
  local ffi = require("ffi")
  if not hmac_lib then
    ffi.cdef([[
      const void *EVP_sha1(void);
      unsigned char *HMAC(const void *md, const void *key, int key_len, const unsigned char *d, size_t n,
                          unsigned char *out, unsigned int *out_len);
    ]])
    local ok, l = pcall(ffi.load, "libcrypto.so.3")
    hmac_lib = ok and l or ffi.load("crypto")
  end
  local out, len = ffi.new("unsigned char[20]"), ffi.new("unsigned int[1]")
  hmac_lib.HMAC(hmac_lib.EVP_sha1(), key, #key, s, #s, out, len)
  return ffi.string(out, len[0])
end

function M.http(T, ngx, o)
  T.headers, T.args, T.printed, T.captures = {}, {}, {}, {}
  local clock = function() return T.clock end
  local limits = M.dict(o and o.limits, clock)
  function limits:set(k, v, exptime) return self:safe_set(k, v, exptime) end
  ngx.shared.portico_limits = limits
  -- external-auth's answer cache (ingress-nginx auth-cache-key): evicting `set` allowed too.
  local auth_cache = M.dict(nil, clock)
  function auth_cache:set(k, v, exptime) return self:safe_set(k, v, exptime) end
  ngx.shared.portico_auth_cache = auth_cache
  -- digest-auth's nonce key and highest nc per nonce (never evicted: safe_* only).
  ngx.shared.portico_digest = M.dict(o and o.digest, clock)

  local function first(v) if type(v) == "table" then return v[1] end return v end
  setmetatable(ngx.var, { __index = function(_, k)
    if type(k) ~= "string" then return nil end
    if k:sub(1, 5) == "http_" then return first(T.headers[k:sub(6):gsub("_", "-")]) end
    if k:sub(1, 4) == "arg_" then return first(T.args[k:sub(5)]) end
    return nil
  end })

  local resp = {}
  T.resp_headers = resp
  local function norm(k) return (tostring(k):lower():gsub("_", "-")) end
  ngx.header = setmetatable({}, {
    __index = function(_, k) return resp[norm(k)] end,
    __newindex = function(_, k, v) resp[norm(k)] = v end,
  })

  local req = ngx.req
  function req.get_headers()
    local out = {}
    for k, v in pairs(T.headers) do out[k] = v end
    return out
  end
  function req.set_header(name, value)
    if type(value) == "table" and #value == 0 then value = nil end
    T.headers[name:lower()] = value
  end
  function req.clear_header(name) T.headers[name:lower()] = nil end
  function req.get_uri_args()
    local out = {}
    for k, v in pairs(T.args) do out[k] = v end
    return out
  end
  function req.set_uri_args(args) T.args = args end
  function req.set_uri(uri, jump)
    if jump then error("jump is not allowed in this phase") end
    ngx.var.uri = uri
    T.new_uri = uri
  end

  ngx.location = { capture = function(uri, opts)
    local seen = {}
    for k, v in pairs(T.headers) do seen[k] = v end
    T.captures[#T.captures + 1] = { uri = uri, opts = opts, headers = seen }
    return T.capture and T.capture(uri, opts) or { status = 500, header = {}, body = "" }
  end }

  function ngx.print(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    T.printed[#T.printed + 1] = table.concat(parts)
  end

  -- Lua patterns stand in for PCRE; the replacement's $n / ${n} / $$ are translated.
  ngx.re.sub = function(s, p, repl)
    local r = repl:gsub("%%", "%%%%"):gsub("%$%$", "\1"):gsub("%${(%d)}", "%%%1"):gsub("%$(%d)", "%%%1"):gsub("\1", "$")
    local ok, out, n = pcall(string.gsub, s, p, r, 1)
    if not ok then return nil, nil, out end
    return out, n
  end

  -- Lua patterns stand in for PCRE; the "i" option is honoured (captures then come from the lower-cased subject).
  ngx.re.match = function(s, p, opts)
    local subject, pat = s, p
    if opts and opts:find("i", 1, true) then subject, pat = s:lower(), p:lower() end
    local r = { subject:find(pat) }
    if not r[1] then return nil end
    local m = { [0] = subject:sub(r[1], r[2]) }
    for i = 3, #r do m[i - 2] = r[i] end
    return m
  end

  ngx.OK, ngx.HTTP_OK = 0, 200
  ngx.HTTP_GET, ngx.HTTP_HEAD, ngx.HTTP_POST = 2, 4, 8
  ngx.is_subrequest = false
  ngx.encode_base64, ngx.decode_base64 = b64enc, b64dec
  ngx.sha1_bin = sha1_bin
  ngx.hmac_sha1 = hmac_sha1
  function ngx.unescape_uri(s) return (s:gsub("%+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end
  function ngx.time() return math.floor(T.clock) end
  -- As nginx's cookie_time: "Thu, 01-Jan-1970 00:00:00 GMT".
  function ngx.cookie_time(t) return os.date("!%a, %d-%b-%Y %H:%M:%S GMT", t) end
  -- As lua-nginx-module's default (a URI component): everything but letters, digits and - . _ ~ escaped.
  function ngx.escape_uri(s) return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end)) end
end

-- Fixtures shared by the balancer tests: the socket configured for backends without endpoints (balancer.configure's
-- `unavailable`), and an endpoint of a backend (port 80 and weight 1 unless given).
M.UNAVAILABLE = "unix:/run/portico/unavailable.sock"
function M.ep(address, port) return { address = address, port = port or 80, weight = 1 } end

-- A tiny test reporter in the style of the other Lua tests: "ok - name" / "not ok - name: why".
function M.reporter()
  local R = { failures = 0 }
  function R.check(name, cond, msg)
    if cond then print("ok - " .. name)
    else R.failures = R.failures + 1; print("not ok - " .. name .. ": " .. tostring(msg or "")) end
  end
  function R.done() if R.failures > 0 then os.exit(1) end end
  return R
end

return M
