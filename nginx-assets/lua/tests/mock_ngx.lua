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
    var = {}, header = {}, ctx = {},
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
