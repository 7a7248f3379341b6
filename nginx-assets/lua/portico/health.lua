-- Passive health checking (Backend.passiveHealth = { failures, statuses, ejectSeconds }), as data: no reload, no
-- timer. An endpoint of such a backend that fails `failures` times in a row is ejected for `ejectSeconds`: the
-- balancer's pickers skip it for new requests while some other endpoint of the backend is not ejected (when every
-- endpoint is ejected, all are used: a degraded backend never becomes a total outage). A success resets the count.
--
-- What counts as one failure of one attempt (each attempt is counted once, by one of two observers):
--   - an attempt nginx retried (proxy_next_upstream: a connection error or timeout): seen by the balancer when it
--     picks the next peer (get_last_failure() says "failed"; "next" — nginx's 403/404 retries — only counts when
--     its status is in `statuses`), reported with _M.failed;
--   - the last attempt of the request (the one nginx did not retry): seen in the log phase, _M.log(), from
--     $upstream_addr / $upstream_status / $upstream_header_time, which list every attempt. No response header
--     ("-" header time with a status nginx made up: refused, reset, timed out) or a status in `statuses` is a
--     failure; any other status is a success; no status at all ("-", the client went away first) is neither.
-- A status in `statuses` never makes nginx retry (proxy_next_upstream stays error/timeout): that is nginx's
-- business; here it only counts toward ejection.
--
-- State is in the shared dict portico_health, so every worker agrees, keyed by backend id and peer ("<id> <host>:<port>",
-- the peer as nginx writes it in $upstream_addr):
--   "f:<id> <peer>"  failures in a row; expires 2 x ejectSeconds after the first one, so old failures never add up;
--   "e:<id> <peer>"  ejected since (ngx.now()); expires after ejectSeconds. The current settings decide whether it
--                    still holds, so a shorter ejectSeconds takes effect at once;
--   "g:<id>"         a counter bumped on every ejection: a worker re-reads a backend's ejections only when it moved
--                    (or its copy is older than a second), so picking costs one shared-dict read per request.
-- Settings come from the backend as stored (portico.store) and are recompiled when it changes, like the pickers:
-- new settings apply to the next request, and a backend without passiveHealth is never skipped nor counted.
local store = require("portico.store")

local ngx_var = ngx.var
local tostring, tonumber, type = tostring, tonumber, type
local floor = math.floor
local sub = string.sub

local dict = ngx.shared.portico_health

local _M = {}

-- How long a worker trusts its copy of a backend's ejected peers when the generation did not move (it also
-- expires with the first ejection that ends). Bounds staleness if the generation key is ever lost.
local MAX_AGE = 1

local conf = {}   -- backend id -> compiled settings, or false (no passive health); per data change
local views = {}  -- backend id -> { gen, expires, set = {peer -> true} | false, all = bool }

store.on_change(function(id)
  conf[id] = nil
  views[id] = nil
end)

local logged_at = {}
local function warn_every(key, secs, ...)
  local now = ngx.now()
  if (logged_at[key] or 0) + secs <= now then
    logged_at[key] = now
    ngx.log(ngx.WARN, ...)
  end
end

local function compile(id, ph)
  if type(ph) ~= "table" then return false end
  if not dict then
    warn_every("nodict", 60, "portico: backend ", id, ": passive health checking needs lua_shared_dict portico_health; off")
    return false
  end
  local f, e = tonumber(ph.failures), tonumber(ph.ejectSeconds)
  if not f or f < 1 or not e or e <= 0 then
    warn_every("bad:" .. id, 60, "portico: backend ", id, ": invalid passiveHealth settings; passive health checking off")
    return false
  end
  local statuses = {}
  if type(ph.statuses) == "table" then
    for _, s in ipairs(ph.statuses) do
      local n = tonumber(s)
      if n then statuses[tostring(floor(n))] = true end
    end
  end
  return {
    failures = floor(f),
    eject = e,
    window = 2 * e,
    statuses = statuses, -- keyed by the status as $upstream_status writes it ("503")
    fkey = "f:" .. id .. " ",
    ekey = "e:" .. id .. " ",
    gkey = "g:" .. id,
  }
end

-- The compiled settings of a backend, or nil when it has no passive health checking.
local function settings(id)
  local s = conf[id]
  if s == nil then
    if id == nil then return nil end
    local b = store.get(id)
    s = compile(id, b and b.passiveHealth)
    conf[id] = s
  end
  return s or nil
end
_M.settings = settings

-- Whether a response status counts as a failure for this backend (for get_last_failure's "next").
function _M.failure_status(id, status)
  local s = settings(id)
  return s ~= nil and status ~= nil and s.statuses[tostring(status)] == true
end

local function eject(s, id, peer)
  local now = ngx.now()
  local ek = s.ekey .. peer
  local ok, err = dict:safe_add(ek, now, s.eject)
  if not ok then
    if err ~= "exists" then
      warn_every("full", 10, "portico: shared dict portico_health cannot store ", ek, ": ", err)
      return false
    end
    local since = dict:get(ek)
    -- Already ejected (another worker, or a request in flight when it was): the ejection keeps its end.
    if since and since + s.eject > now then return false end
    ok, err = dict:safe_set(ek, now, s.eject)
    if not ok then
      warn_every("full", 10, "portico: shared dict portico_health cannot store ", ek, ": ", err)
      return false
    end
  end
  dict:incr(s.gkey, 1, 0)
  views[id] = nil
  ngx.log(ngx.WARN, "portico: backend ", id, ": endpoint ", peer, " ejected for ", s.eject, " s after ",
    s.failures, " failure(s) in a row")
  return true
end

-- One failure of `peer` ("host:port" as in $upstream_addr) for backend `id`. Returns true when it got ejected.
local function failed(id, peer)
  local s = settings(id)
  if not s then return false end
  local fk = s.fkey .. peer
  local n, err = dict:incr(fk, 1, 0, s.window)
  if not n then
    warn_every("full", 10, "portico: shared dict portico_health cannot count failures of ", peer, ": ", err)
    return false
  end
  if n < s.failures then return false end
  dict:delete(fk)
  return eject(s, id, peer)
end
_M.failed = failed

-- One success of `peer`: its failures in a row start again from zero.
local function succeeded(id, peer)
  local s = settings(id)
  if not s then return end
  dict:delete(s.fkey .. peer)
end
_M.succeeded = succeeded

-- Whether `peer` is ejected now (one shared-dict read; the balancer uses ejected_set).
function _M.ejected(id, peer)
  local s = settings(id)
  if not s then return false end
  local since = dict:get(s.ekey .. peer)
  return since ~= nil and since + s.eject > ngx.now()
end

-- For the balancer: the ejected peers among `peers` (the backend's peer keys) as a set, or nil when none is
-- ejected — or every one is, in which case all are used. One shared-dict read per call unless something changed.
function _M.ejected_set(id, peers)
  local s = settings(id)
  if not s then return nil end
  local gen = dict:get(s.gkey) or 0
  local now = ngx.now()
  local v = views[id]
  if v and v.gen == gen and now < v.expires then return v.set or nil end
  local set, n, expires = {}, 0, now + MAX_AGE
  local ekey = s.ekey
  for i = 1, #peers do
    local p = peers[i]
    local since = dict:get(ekey .. p)
    if since then
      local ends = since + s.eject
      if ends > now then
        set[p] = true
        n = n + 1
        if ends < expires then expires = ends end
      end
    end
  end
  local all = n > 0 and n >= #peers
  if all and not (v and v.all) then
    ngx.log(ngx.WARN, "portico: backend ", id, ": every endpoint is ejected; using all of them")
  end
  views[id] = { gen = gen, expires = expires, set = (n > 0 and not all) and set or false, all = all }
  if n == 0 or all then return nil end
  return set
end

-- "a, b : c" → { "a", "b", ":", "c" } (" : " separates the upstreams of internal redirects).
local function split(s)
  local out = {}
  if s then
    for t in s:gmatch("[^%s,]+") do out[#out + 1] = t end
  end
  return out
end

-- Log phase: the outcome of the last attempt of each upstream (earlier attempts were retried after a failure the
-- balancer already counted). Cheap and immediate for backends without passive health checking.
function _M.log()
  local id = ngx_var.portico_backend
  if id == nil or id == "" or conf[id] == false then return end
  local s = settings(id)
  if not s then return end
  local addrs = ngx_var.upstream_addr
  if not addrs then return end
  local ctx = ngx.ctx
  if ctx.portico_health then return end -- several log handlers may call this for one request
  ctx.portico_health = true
  local a, st, ht = split(addrs), split(ngx_var.upstream_status), split(ngx_var.upstream_header_time)
  local has_ht = #ht == #a
  for i = 1, #a do
    local peer = a[i]
    local nxt = a[i + 1]
    if peer ~= ":" and (nxt == nil or nxt == ":") and sub(peer, 1, 5) ~= "unix:" then
      local code = st[i]
      if code and code ~= "-" and code ~= ":" then
        if s.statuses[code] or (has_ht and ht[i] == "-") then
          failed(id, peer)
        else
          succeeded(id, peer)
        end
      end
    end
  end
end

return _M
