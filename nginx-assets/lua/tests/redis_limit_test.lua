-- Unit tests of the Redis client (portico/redis.lua: RESP encoding and replies) and the rate-limit plugin's policy
-- "redis" (ingress-nginx's global-rate-limit): the sliding-window arithmetic, counting in a fake Redis through the
-- plugin engine, refusals not counted and remembered, fail open / fail closed with the failure counted and logged,
-- counter keys per plugin (so per namespace), key templates, the configuration check, and the engine running such
-- chains in the access phase. The fake Redis behind the mocked ngx.socket.tcp parses the commands it is sent with
-- its own RESP reader (not the module's), on the test's clock.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

-- A fake Redis server: GET, INCR, DECR, EXPIRE on string counters with expiry on T.clock. srv.down refuses
-- connections; srv.reply(cmd) may return a raw reply to send instead (errors, garbage).
local function fake_redis(T)
  local srv = { data = {}, exp = {}, cmds = {}, connects = 0, kept = {}, closed = 0, down = false }
  local function live(k)
    local e = srv.exp[k]
    if e and e <= T.clock then srv.data[k], srv.exp[k] = nil, nil end
    return srv.data[k]
  end
  local function answer(cmd)
    srv.cmds[#srv.cmds + 1] = cmd
    if srv.reply then
      local r = srv.reply(cmd)
      if r then return r end
    end
    local op, k = cmd[1], cmd[2]
    if op == "GET" then
      local v = live(k)
      if v == nil then return "$-1\r\n" end
      return "$" .. #v .. "\r\n" .. v .. "\r\n"
    elseif op == "INCR" or op == "DECR" then
      local v = (tonumber(live(k)) or 0) + (op == "INCR" and 1 or -1)
      srv.data[k] = tostring(v)
      return ":" .. v .. "\r\n"
    elseif op == "EXPIRE" then
      if live(k) == nil then return ":0\r\n" end
      srv.exp[k] = T.clock + tonumber(cmd[3])
      return ":1\r\n"
    end
    return "-ERR unknown command\r\n"
  end
  -- An independent RESP request reader: "*<n>\r\n" then n × "$<len>\r\n<bytes>\r\n".
  local function parse(data)
    local out, pos = {}, 1
    while pos <= #data do
      local n, p = data:match("^%*(%d+)\r\n()", pos)
      assert(n, "fake redis: not a RESP array at " .. pos)
      pos = p
      local cmd = {}
      for i = 1, tonumber(n) do
        local len, q = data:match("^%$(%d+)\r\n()", pos)
        assert(len, "fake redis: not a bulk string")
        cmd[i] = data:sub(q, q + tonumber(len) - 1)
        assert(data:sub(q + tonumber(len), q + tonumber(len) + 1) == "\r\n", "fake redis: bulk not terminated")
        pos = q + tonumber(len) + 2
      end
      out[#out + 1] = cmd
    end
    return out
  end
  T.ngx.socket = { tcp = function()
    local s = { buf = "" }
    function s:settimeouts(a, b, c) srv.timeouts = { a, b, c } end
    function s:connect(host, port, opts)
      srv.connects = srv.connects + 1
      srv.last = { host = host, port = port, pool = opts and opts.pool }
      if srv.down then return nil, "connection refused" end
      return 1
    end
    function s:send(data)
      srv.sent = (srv.sent or "") .. data
      for _, cmd in ipairs(parse(data)) do self.buf = self.buf .. answer(cmd) end
      return #data
    end
    function s:receive(n)
      if n == nil or n == "*l" then
        local i = self.buf:find("\r\n", 1, true)
        if not i then return nil, "timeout" end
        local line = self.buf:sub(1, i - 1)
        self.buf = self.buf:sub(i + 2)
        return line
      end
      if #self.buf < n then return nil, "timeout" end
      local d = self.buf:sub(1, n)
      self.buf = self.buf:sub(n + 1)
      return d
    end
    function s:setkeepalive(idle, size) srv.kept[#srv.kept + 1] = { idle, size }; return 1 end
    function s:close() srv.closed = srv.closed + 1; return 1 end
    return s
  end }
  return srv
end

local REDIS = { host = "192.0.2.200", port = 6379, timeoutMs = 50, poolSize = 7, idleMs = 5000 }

local function plugin(fields)
  local p = { name = "team/grl", type = "rate-limit", policy = "redis", by = "ip", status = 429, failOpen = true, redis = REDIS }
  for k, v in pairs(fields or {}) do p[k] = v end
  return p
end

local function setup(plugins, consumers)
  local T = mock.fresh()
  local srv = fake_redis(T)
  local store = require("portico.store")
  assert(store.apply_all({ p = { upsert = plugins }, k = { upsert = consumers or {} } }))
  return T, require("portico.plugins"), srv, store
end

local function request(T, engine, o)
  T.headers = {}
  for k, v in pairs(o.headers or {}) do T.headers[k:lower()] = v end
  T.ngx.ctx = {}
  T.ngx.status = 0
  T.exited = nil
  T.printed = {}
  for k in pairs(T.resp_headers) do T.resp_headers[k] = nil end
  local v = T.ngx.var
  for k in pairs(v) do v[k] = nil end
  v.portico_plugins = o.plugins
  v.remote_addr = o.ip or "192.0.2.10"
  engine.access()
  local out = {}
  for k, x in pairs(T.resp_headers) do out[k] = x end
  return { status = T.exited and T.exited ~= 200 and T.exited or (T.exited == 200 and T.ngx.status) or 200, proxied = T.exited == nil, headers = out }
end

-------------------------------------------------------------------------------------------------------------- RESP
do
  mock.fresh()
  local redis = require("portico.redis")
  R.check("resp: a command is an array of bulk strings, binary-safe",
    redis.encode({ "INCR", "a b\r\n" }) == "*2\r\n$4\r\nINCR\r\n$5\r\na b\r\n\r\n", redis.encode({ "INCR", "a b\r\n" }))
  R.check("resp: numbers are sent as their decimal text", redis.encode({ "EXPIRE", "k", 120 }) == "*3\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$3\r\n120\r\n")
  local function reader(text)
    local s = { buf = text }
    function s:receive(n)
      if n == nil then
        local i = self.buf:find("\r\n", 1, true)
        if not i then return nil, "closed" end
        local l = self.buf:sub(1, i - 1); self.buf = self.buf:sub(i + 2); return l
      end
      if #self.buf < n then return nil, "closed" end
      local d = self.buf:sub(1, n); self.buf = self.buf:sub(n + 1); return d
    end
    return s
  end
  R.check("resp: integer reply", redis.read_reply(reader(":42\r\n")) == 42)
  R.check("resp: status reply", redis.read_reply(reader("+OK\r\n")) == "OK")
  R.check("resp: bulk reply", redis.read_reply(reader("$5\r\nab\r\nc\r\n")) == "ab\r\nc")
  R.check("resp: a missing key is null, not an error", redis.read_reply(reader("$-1\r\n")) == redis.null)
  local ok, msg = redis.read_reply(reader("-WRONGTYPE Operation against a key\r\n"))
  R.check("resp: an error reply is false and its message", ok == false and msg:find("WRONGTYPE", 1, true) == 1, msg)
  local arr = redis.read_reply(reader("*3\r\n:1\r\n$-1\r\n-ERR x\r\n"))
  R.check("resp: arrays, with a null and an error kept in place", type(arr) == "table" and arr[1] == 1 and arr[2] == redis.null and arr[3].err == "ERR x")
  local v, why = redis.read_reply(reader("$99999999\r\n"))
  R.check("resp: a bulk longer than the bound is a protocol error (nothing is read into memory)", v == nil and why:find("bulk length", 1, true), why)
  v, why = redis.read_reply(reader("*2\r\n*2\r\n*1\r\n:1\r\n"))
  R.check("resp: nesting is bounded", v == nil and why:find("array", 1, true), why)
  v, why = redis.read_reply(reader("?what\r\n"))
  R.check("resp: an unknown reply type is a protocol error", v == nil and why:find("unknown", 1, true), why)
  v, why = redis.read_reply(reader("$3\r\nab"))
  R.check("resp: a truncated bulk is an error", v == nil, why)
end

----------------------------------------------------------------------------------------------------- window math
do
  mock.fresh()
  local rl = require("portico.plugins.rate_limit")
  R.check("window: within the limit passes", rl.sliding(0, 3, 3, 60, 0) == nil)
  R.check("window: over it, with an empty previous window, waits for the rest of the window", rl.sliding(0, 4, 3, 60, 15) == 45)
  R.check("window: the previous window counts by the share of it still inside the sliding window",
    rl.sliding(4, 1, 3, 60, 30) == nil and rl.sliding(4, 2, 3, 60, 30) ~= nil, tostring(rl.sliding(4, 2, 3, 60, 30)))
  -- prev 4, 2 already counted, limit 3: 4·(30−d)/60 + 2 < 3 ⇔ d > 15.
  R.check("window: the wait is until the previous window's share has decayed enough", math.abs(rl.sliding(4, 3, 3, 60, 30) - 15) < 1e-9, rl.sliding(4, 3, 3, 60, 30))
  R.check("window: never longer than the rest of this window", rl.sliding(100, 9, 3, 60, 50) == 10)
end

-------------------------------------------------------------------------------------------- counting through Redis
do
  local T, engine, srv = setup({ grl = plugin({ key = "ing.team.web.grl_1", limit = 3, windowSeconds = 60 }) })
  T.clock = 960 -- the start of window 16
  local st = {}
  for i = 1, 4 do st[i] = request(T, engine, { plugins = "grl" }) end
  R.check("redis: `limit` requests pass in a window, the next gets 429",
    st[1].proxied and st[2].proxied and st[3].proxied and st[4].status == 429, st[4].status)
  R.check("redis: …with Retry-After: the rest of the window", st[4].headers["retry-after"] == "60", tostring(st[4].headers["retry-after"]))
  local k = "portico:rl:ing.team.web.grl_1:i:192.0.2.10:16"
  R.check("redis: one counter per plugin key, sample and window; the refused request is not counted (DECR)", srv.data[k] == "3", tostring(srv.data[k]))
  R.check("redis: the counter expires after two windows", srv.exp[k] == 960 + 120, tostring(srv.exp[k]))
  R.check("redis: one pipelined write per request (GET previous, INCR, EXPIRE)", srv.cmds[1][1] == "GET" and srv.cmds[1][2] == "portico:rl:ing.team.web.grl_1:i:192.0.2.10:15"
    and srv.cmds[2][1] == "INCR" and srv.cmds[3][1] == "EXPIRE" and srv.cmds[3][3] == "120")
  R.check("redis: the connection comes from and goes back to the pool (idle ms, size)", srv.last.pool == "portico-redis:192.0.2.200:6379"
    and srv.kept[1][1] == 5000 and srv.kept[1][2] == 7 and srv.timeouts[1] == 50)
  local before = srv.connects
  T.clock = 990
  local r = request(T, engine, { plugins = "grl" })
  R.check("redis: a refused client is refused from memory until it may pass again (no Redis call)", r.status == 429 and srv.connects == before and r.headers["retry-after"] == "30", tostring(r.headers["retry-after"]))
  r = request(T, engine, { plugins = "grl", ip = "192.0.2.11" })
  R.check("redis: another client has its own counter", r.proxied)
  -- Window 17, half way: the previous window's 3 count for 1.5.
  T.clock = 1050
  local a, b, c = request(T, engine, { plugins = "grl" }), request(T, engine, { plugins = "grl" }), request(T, engine, { plugins = "grl" })
  R.check("redis: the next window starts with the previous one's weighted count (sliding window)", a.proxied and b.proxied and c.status == 429, c.status)
  R.check("redis: …and the wait is until enough of it has slid out", c.headers["retry-after"] == "10", tostring(c.headers["retry-after"]))
end

do -- failures
  local T, engine, srv = setup({
    open = plugin({ key = "open", limit = 1, windowSeconds = 10 }),
    closed = plugin({ key = "closed", limit = 1, windowSeconds = 10, failOpen = false }),
    none = (function() local p = plugin({ key = "none", limit = 1, windowSeconds = 10 }); p.redis = nil; return p end)(),
  })
  srv.down = true
  local a, b = request(T, engine, { plugins = "open" }), request(T, engine, { plugins = "open" })
  R.check("fail open: Redis unreachable, requests pass (the default, as ingress-nginx)", a.proxied and b.proxied)
  local shm = require("portico.shm")
  R.check("fail open: each is counted (portico_global_rate_limit_store_failures{outcome=open})", shm.get_count("grl:open") == 2, shm.get_count("grl:open"))
  local n = 0
  for _, l in ipairs(T.logs) do if l.msg:find("Redis unavailable", 1, true) then n = n + 1 end end
  R.check("fail open: logged once per 10 s, naming the plugin and why", n == 1 and T.logged(T.ngx.ERR, "team/grl: Redis unavailable %(connect: connection refused%)"), n)
  local c = request(T, engine, { plugins = "closed" })
  R.check("fail closed: 503", c.status == 503 and not c.proxied, c.status)
  R.check("fail closed: counted apart", shm.get_count("grl:closed") == 1)
  srv.down = false
  request(T, engine, { plugins = "none" })
  R.check("no Redis configured: fails open, and the log names the ConfigMap key", shm.get_count("grl:open") == 3 and T.logged(T.ngx.ERR, "global%-rate%-limit%-redis%-host"))
  srv.reply = function(cmd) if cmd[1] == "INCR" then return "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n" end end
  T.clock = T.clock + 11
  local e = request(T, engine, { plugins = "open" })
  R.check("an error reply of Redis is a failure too (fails open)", e.proxied and shm.get_count("grl:open") == 4, shm.get_count("grl:open"))
  srv.reply = function() return "garbage\r\n" end
  local closed_before = srv.closed
  e = request(T, engine, { plugins = "closed" })
  R.check("a reply that is not RESP: the connection is closed, not pooled, and the request fails closed", e.status == 503 and srv.closed == closed_before + 1)
end

do -- keys: per plugin (namespace), templates, long samples, exempt clients
  local T, engine, srv = setup({
    a = plugin({ key = "ing.team-a.web.grl_1", limit = 5, windowSeconds = 60 }),
    b = plugin({ key = "ing.team-b.web.grl_1", limit = 5, windowSeconds = 60 }),
    tpl = plugin({ key = "tpl", limit = 5, windowSeconds = 60, by = "key", keyTemplate = { { v = "remote_addr" }, "-", { v = "http_x_api_client" } } }),
    only = plugin({ key = "only", limit = 5, windowSeconds = 60, by = "key", keyTemplate = { { v = "http_x_api_client" } } }),
    ex = plugin({ key = "ex", limit = 1, windowSeconds = 60, exempt = { "198.51.100.0/24" } }),
  })
  T.clock = 960
  request(T, engine, { plugins = "a" })
  request(T, engine, { plugins = "b" })
  R.check("keys: two namespaces' Ingresses never share a counter", srv.data["portico:rl:ing.team-a.web.grl_1:i:192.0.2.10:16"] == "1"
    and srv.data["portico:rl:ing.team-b.web.grl_1:i:192.0.2.10:16"] == "1")
  request(T, engine, { plugins = "tpl", headers = { ["x-api-client"] = "mobile" } })
  R.check("keys: a template joins its text and variables (${remote_addr}-${http_x_api_client})", srv.data["portico:rl:tpl:k:192.0.2.10-mobile:16"] == "1")
  request(T, engine, { plugins = "only" })
  R.check("keys: a template that comes out empty counts by client address, as ingress-nginx", srv.data["portico:rl:only:i:192.0.2.10:16"] == "1")
  local long = string.rep("x", 300)
  request(T, engine, { plugins = "only", headers = { ["x-api-client"] = long } })
  local sha = require("portico.plugins.crypto").sha256_hex("k:" .. long)
  R.check("keys: a sample longer than 64 bytes is hashed (bounded key length)", srv.data["portico:rl:only:#" .. sha .. ":16"] == "1")
  local before = #srv.cmds
  local x1, x2 = request(T, engine, { plugins = "ex", ip = "198.51.100.9" }), request(T, engine, { plugins = "ex", ip = "198.51.100.9" })
  R.check("exempt: ignored CIDRs are never limited and cost no Redis call", x1.proxied and x2.proxied and #srv.cmds == before)
end

---------------------------------------------------------------------------------------------------- engine, check
do
  local T, engine, _, store = setup({
    grl = plugin({ key = "grl", limit = 5, windowSeconds = 60 }),
    ka = { name = "team/ka", type = "key-auth", namespace = "team", header = "apikey" },
  })
  T.ngx.var.remote_addr = "192.0.2.10"
  require("portico.store").sync()
  R.check("engine: a chain with a Redis rate limit runs in the access phase (cosockets), not in the router", engine.run_sync("grl") == "async")
  R.check("engine: …and so does an auth chain (its consumer may bring one)", engine.run_sync("ka") == "async")
  store.apply_all({ p = { remove = { "grl" } } })
  store.sync()
  local answer = engine.run_sync("ka")
  R.check("engine: without any Redis rate limit an auth chain runs in the router again", answer ~= "async", tostring(answer))
end

do -- a consumer's own Redis rate limit, joined to a key-auth chain in the access phase
  local sha = function(x) return require("portico.plugins.crypto").sha256_hex(x) end
  mock.fresh()
  local cons = { team = { consumers = {
    { name = "gold", username = "gold", keys = { sha("gold-key") }, basic = {}, plugins = { "gold-grl" } },
  } } }
  local T, engine, srv = setup({
    ka = { name = "team/ka", type = "key-auth", namespace = "team", header = "apikey" },
    ["gold-grl"] = plugin({ key = "team_gold-grl_1", limit = 2, windowSeconds = 60, by = "consumer" }),
  }, cons)
  T.clock = 960
  local st = {}
  for i = 1, 3 do st[i] = request(T, engine, { plugins = "ka", headers = { apikey = "gold-key" }, ip = "192.0.2." .. i }) end
  R.check("consumer: its own policy-redis rate limit counts the consumer across addresses, in Redis",
    st[1].proxied and st[2].proxied and st[3].status == 429 and srv.data["portico:rl:team_gold-grl_1:c:team/gold:16"] == "2", st[3].status)
end

do
  mock.fresh()
  local rl = require("portico.plugins.rate_limit")
  local ok = { type = "rate-limit", policy = "redis", limit = 10, windowSeconds = 60, by = "ip", status = 429, key = "ing.a.b.grl_1", failOpen = true,
    redis = { host = "10.0.0.7", port = 6379, timeoutMs = 50, poolSize = 50, idleMs = 10000 } }
  local function with(f)
    local c = {}
    for k, v in pairs(ok) do c[k] = v end
    for k, v in pairs(f) do c[k] = v end
    return c
  end
  R.check("check: a valid instance passes", rl.check(ok) == nil, rl.check(ok))
  R.check("check: a template of allowed variables passes", rl.check(with({ by = "key", keyTemplate = { { v = "remote_addr" }, "-", { v = "http_x_api_client" }, { v = "cookie_Session" } } })) == nil)
  R.check("check: a variable outside the allowlist is refused", rl.check(with({ by = "key", keyTemplate = { { v = "request_body" } } })) ~= nil)
  R.check("check: text with $ or spaces is refused", rl.check(with({ by = "key", keyTemplate = { "$host" } })) ~= nil and rl.check(with({ by = "key", keyTemplate = { "a b" } })) ~= nil)
  R.check("check: a host name is refused (nginx resolves none)", rl.check(with({ redis = { host = "redis.svc", port = 6379, timeoutMs = 50, poolSize = 50, idleMs = 1 } })) ~= nil)
  R.check("check: bounds of the window and the limit", rl.check(with({ windowSeconds = 0 })) ~= nil and rl.check(with({ windowSeconds = 604801 })) ~= nil and rl.check(with({ limit = 0 })) ~= nil)
  R.check("check: failOpen is required", rl.check(with({ failOpen = "yes" })) ~= nil)
  R.check("check: an unknown policy is refused", rl.check(with({ policy = "memcached" })) ~= nil)
end

R.done()
