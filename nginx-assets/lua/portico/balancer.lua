-- Balancing, in the balancer phase (balancer_by_lua runs without a coroutine): the router (router.lua, earlier in
-- the same request) synced the worker's data and set $portico_backend; here the canary decision is taken, a peer
-- picked with the backend's algorithm, the route's timeouts applied, and retries arranged on another peer. A backend without usable endpoints gets the
-- internal 503 socket as its peer: the client sees nginx's generic 503 page and the reason goes to the error log
-- (at most once per backend every 10 s per worker), never to the client. For a backend with passive health
-- checking (health.lua), every algorithm skips ejected endpoints while some endpoint is not ejected (a sticky or
-- hashed request falls over to the next endpoint of the ring), and the failure that made nginx retry is counted.
local ngx_balancer = require("ngx.balancer")
local store = require("portico.store")
local peers = require("portico.peers")
local rr = require("portico.rr")
local chash = require("portico.chash")
local ewma = require("portico.ewma")
local health = require("portico.health")
-- The router's peer hand-off (peer_handoff.lua): nil without Portico's variables module (or nginx).
local hand = require("portico.peer_handoff")
if type(hand) ~= "table" then hand = nil end

local set_current_peer = ngx_balancer.set_current_peer
local set_more_tries = ngx_balancer.set_more_tries
local get_last_failure = ngx_balancer.get_last_failure
local set_timeouts = ngx_balancer.set_timeouts
local ngx_var = ngx.var

local _M = {}

local unavailable_peer = nil -- "unix:<runtime>/unavailable.sock", from init.lua

function _M.configure(opts)
  unavailable_peer = opts.unavailable
end

-- Per-worker balancer state per backend, rebuilt when the backend's data changes:
--   { algo = object with :next(skip), n = usable endpoints, canary = table|nil, stick = fn(skip)|nil,
--     observe = fn|nil, reason = string|nil, health = true|nil (passive health checking), keys = {"host:port"} }
local pickers = {}

local seeded = false
local function seed()
  if seeded then return end
  math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
  seeded = true
end

-- Endpoints nginx may be handed, addresses in nginx's host form ("[v6]"). The writer already refused the others
-- (with a count); this is the last check before a peer exists at all.
local function usable(id, endpoints)
  local out = {}
  for i = 1, #(endpoints or {}) do
    local e = endpoints[i]
    local host, why = peers.check(e.address)
    if host and peers.valid_port(e.port) then
      out[#out + 1] = { address = host, port = e.port, weight = e.weight }
    else
      ngx.log(ngx.WARN, "portico: backend ", id, ": endpoint ", tostring(e.address), " skipped (", why or "invalid port", ")")
    end
  end
  return out
end

-- upstream-hash-by-subset (ingress-nginx): the endpoints sorted by address and port and cut in groups of `size`; a
-- ring over the groups maps the key to one, and each request goes to a random endpoint of it not to be skipped (a
-- retry, an ejected endpoint). When all of the group are skipped, the ring of every endpoint decides.
local function subsets(eps, size, ring, key_of)
  local sorted = {}
  for i = 1, #eps do sorted[i] = eps[i] end
  table.sort(sorted, function(a, b)
    if a.address ~= b.address then return a.address < b.address end
    return a.port < b.port
  end)
  local groups = {}
  for i = 1, #sorted, size do
    local g = { address = "subset", port = #groups + 1, members = {} }
    for j = i, math.min(i + size - 1, #sorted) do g.members[#g.members + 1] = sorted[j] end
    groups[#groups + 1] = g
  end
  local gring = chash.new(groups)
  return {
    next = function(_, skip)
      local key = key_of()
      local g = gring:find(key)
      if g then
        local m = g.members
        local start = math.random(1, #m)
        for k = 0, #m - 1 do
          local p = m[(start - 1 + k) % #m + 1]
          if not (skip and skip(p)) then return p end
        end
      end
      return ring:find(key, skip)
    end,
  }
end

-- upstream-hash-by's key: one variable ("$request_uri"), or text combining several and literal characters
-- ("$host$request_uri", "$arg_user-$cookie_sid"), as ingress-nginx hashes them. The template was checked by
-- validate.lua (variables and [%w._:/-] only); a variable that is not set adds nothing.
local function key_function(template)
  local one = template:match("^%$([%a_][%w_]*)$")
  if one then return function() return ngx_var[one] end end
  local parts = {}
  local i = 1
  while i <= #template do
    local name, e = template:match("^%$([%a_][%w_]*)()", i)
    if name then
      parts[#parts + 1] = { var = name }
      i = e
    else
      local lit, e2 = template:match("^([^$]+)()", i)
      parts[#parts + 1] = { text = lit }
      i = e2
    end
  end
  return function()
    local out = {}
    for k = 1, #parts do
      local p = parts[k]
      out[k] = p.text or ngx_var[p.var] or ""
    end
    return table.concat(out)
  end
end
_M._key_function = key_function

local function hashed(eps, b)
  local ring = chash.new(eps)
  local key_of = key_function(b.hashBy or "$request_uri")
  if b.hashSubsetSize and #eps > 0 then return subsets(eps, b.hashSubsetSize, ring, key_of) end
  return { next = function(_, skip) return ring:find(key_of(), skip) end }
end

-- Browsers that reject or misread SameSite=None (Chrome 51-66, every browser on iOS 12, Safari on macOS 10.14,
-- UC Browser before 12.13.2): session-cookie-conditional-samesite-none leaves the attribute out for them.
local function samesite_none_rejected(ua)
  if type(ua) ~= "string" then return false end
  local chrome = tonumber(ua:match("Chrom[ei][um]*/(%d+)%."))
  if chrome and chrome >= 51 and chrome <= 66 then return true end
  if ua:find("%(iP[^;]*;[^)]* OS 12[_%d]*[ ;)]") and ua:find("AppleWebKit/", 1, true) then return true end
  if ua:find("%(Macintosh;[^)]*Mac OS X 10_14[_%d]*[;)]") and ua:find("Version/[%d.]+ Safari") then return true end
  local a, b2, c2 = ua:match("UCBrowser/(%d+)%.(%d+)%.(%d+)")
  if a then
    a, b2, c2 = tonumber(a), tonumber(b2), tonumber(c2)
    if a < 12 or (a == 12 and (b2 < 13 or (b2 == 13 and c2 < 2))) then return true end
  end
  return false
end
_M._samesite_none_rejected = samesite_none_rejected

local function sticky(eps, b, entry)
  local ring = chash.new(eps)
  local robin = rr.new(eps)
  local byid = {}
  for _, e in ipairs(eps) do byid[string.format("%08x", chash.hash(e.address .. ":" .. e.port))] = e end
  local c = b.cookie or {}
  local name = c.name or "INGRESSCOOKIE"
  local suffix = "; Path=" .. (c.path or "/") .. "; HttpOnly"
    .. (c.maxAgeSeconds and ("; Max-Age=" .. c.maxAgeSeconds) or "")
    .. (c.domain and ("; Domain=" .. c.domain) or "")
  local cookie_var = "cookie_" .. name
  -- The response header is set from here (the balancer phase runs before the upstream answers), so locations
  -- need no add_header evaluated on every response; $portico_set_cookie keeps it for log formats.
  local function set_cookie(value)
    local header = name .. "=" .. value .. suffix
    if c.expiresSeconds then header = header .. "; Expires=" .. ngx.cookie_time(ngx.time() + c.expiresSeconds) end
    -- Partitioned (CHIPS) is only accepted by browsers on a Secure cookie.
    if c.secure or c.partitioned or ngx_var.https == "on" then header = header .. "; Secure" end
    if c.sameSite and not (c.sameSite == "None" and c.conditionalSameSiteNone and samesite_none_rejected(ngx_var.http_user_agent)) then
      header = header .. "; SameSite=" .. c.sameSite
    end
    if c.partitioned then header = header .. "; Partitioned" end
    ngx.header["Set-Cookie"] = header
    ngx_var.portico_set_cookie = header
  end
  local function new_key()
    return string.format("%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
  end
  -- session-cookie-change-on-failure: on a retry the cookie follows the endpoint now chosen (balanced: a new key
  -- whose own endpoint on the ring is not one of those tried, as ingress-nginx's pick_new_upstream, so the client's
  -- next request goes straight there; persistent: the endpoint the retry goes to).
  if c.changeOnFailure then
    entry.reissue = function(skip)
      if c.mode == "persistent" then
        local peer = robin:next(skip)
        if peer then set_cookie(string.format("%08x", chash.hash(peer.address .. ":" .. peer.port))) end
        return peer
      end
      for _ = 1, 20 do
        local v = new_key()
        local peer = ring:find(v)
        if peer and not skip(peer) then
          set_cookie(v)
          return peer
        end
      end
      -- No such key found (every endpoint tried, or bad luck 20 times): retry elsewhere, the cookie unchanged.
      return ring:find(new_key(), skip)
    end
  end
  -- First attempt: the peer named by the cookie (or a new cookie is set); retries use round-robin. skip(peer)
  -- (ejected endpoints) sends the client elsewhere for now without changing its cookie, so it comes back to its
  -- endpoint once the ejection ends.
  entry.stick = function(skip)
    local v = ngx_var[cookie_var]
    if c.mode == "persistent" then
      local peer = v and byid[v]
      if not peer then
        peer = skip and robin:next(skip) or robin:next()
        if peer then set_cookie(string.format("%08x", chash.hash(peer.address .. ":" .. peer.port))) end
      elseif skip and skip(peer) then
        peer = robin:next(skip) or peer
      end
      return peer
    end
    if not v or not v:match("^[0-9a-f]+$") then
      v = new_key()
      set_cookie(v)
    end
    return skip and ring:find(v, skip) or ring:find(v)
  end
  return robin
end

local algorithms = {
  round_robin = function(eps) return rr.new(eps) end,
  ewma = function(eps, _, entry)
    local e = ewma.new(eps, 10)
    entry.observe = function(addr, rt, now) e:observe(addr, rt, now) end
    return e
  end,
  chash = hashed,
  cookie = sticky,
}

-- Retries a first attempt is allowed with n usable endpoints: up to two other endpoints.
local function more_tries(n) return n > 1 and (n > 3 and 2 or n - 1) or 0 end

local function build(id, b)
  seed()
  local eps = usable(id, b.endpoints)
  local c = b.canary
  if c then
    -- Variable names computed once per data change, not per request.
    c.header_var = c.header and ("http_" .. c.header:lower():gsub("-", "_")) or nil
    c.cookie_var = c.cookie and ("cookie_" .. c.cookie) or nil
  end
  local entry = { n = #eps, canary = c, reason = b.unavailableReason }
  if health.settings(id) then
    local keys = {}
    for i = 1, #eps do keys[i] = eps[i].address .. ":" .. eps[i].port end
    entry.health, entry.keys = true, keys
  end
  local make = algorithms[b.balance or "round_robin"] or algorithms.round_robin
  entry.algo = make(eps, b, entry)
  -- The router may pick the first attempt's endpoint itself and hand it to nginx (peer_handoff below) when nothing
  -- per request decides it: round-robin without a canary, health checks or stickiness. Each endpoint's binary address
  -- and name are made here, once per data change.
  if hand and make == algorithms.round_robin and not c and not entry.health and not entry.stick and entry.n > 0 then
    local fast = true
    for _, peer in ipairs(entry.algo.peers) do
      peer.sa, peer.name = hand.addr(peer.address, peer.port)
      if not peer.sa then fast = false end
    end
    if fast and #entry.algo.peers > 0 then
      entry.fast = true
      entry.more = more_tries(entry.n)
    end
  end
  return entry
end
_M.build = build

-- A backend's picker is built when a request first needs it and dropped when the backend changes.
store.on_change(function(id) pickers[id] = nil end)
local store_get = store.get
local function picker(id)
  local p = pickers[id]
  if p ~= nil or id == nil then return p end
  local b = store_get(id)
  if not b then return nil end
  p = build(id, b)
  pickers[id] = p
  return p
end

-- Canary decision (ingress-nginx precedence: header, then cookie, then weight). Returns true for the canary.
local function use_canary(c)
  if c.header_var then
    local hv = ngx_var[c.header_var]
    if hv then
      if c.headerValue then
        if hv == c.headerValue then return true end
      elseif c.headerPattern then
        if ngx.re.find(hv, c.headerPattern, "jo") then return true end
      elseif hv == "always" then
        return true
      elseif hv == "never" then
        return false
      end
    end
  end
  if c.cookie_var then
    local cv = ngx_var[c.cookie_var]
    if cv == "always" then return true elseif cv == "never" then return false end
  end
  local w = c.weight or 0
  if w <= 0 then return false end
  return math.random(1, c.weightTotal or 100) <= w
end

local logged_at = {}
local function unavailable(id, p)
  local now = ngx.now()
  local key = id or ""
  if (logged_at[key] or 0) + 10 <= now then
    logged_at[key] = now
    ngx.log(ngx.WARN, "portico: 503 for backend ", key, ": ",
      p and (p.reason or "no ready endpoints") or "backend not programmed")
  end
  local ok, err = set_current_peer(unavailable_peer)
  if not ok then
    ngx.log(ngx.ERR, "portico: cannot use the 503 socket: ", err)
    return ngx.exit(ngx.ERROR)
  end
end

local function peer_key(p) return p.address .. ":" .. p.port end

-- Retry after a connect error or timeout: skip every peer tried so far. $upstream_addr lists them (in nginx's
-- "host:port" form, the same as peer_key), so the first attempt needs no per-request table.
-- Hands the chosen peer to nginx; a failure here is a bug (the store only holds validated IP peers).
local function use_peer(peer)
  local ok, err = set_current_peer(peer.address, peer.port)
  if not ok then
    ngx.log(ngx.ERR, "portico: set_current_peer ", peer.address, ":", peer.port, " failed: ", err)
    return ngx.exit(ngx.ERROR)
  end
end

-- Ejected peers of the backend being balanced (set by balance/retry just before picking: the balancer phase never
-- yields, so no other request runs in between), and the skip function reading it.
local ejected_now = nil
local function skip_ejected(x) return ejected_now[peer_key(x)] end

-- state, status: what get_last_failure() said about the attempt that made nginx retry; the peer of that attempt is
-- the last one in $upstream_addr (the attempt being set up has no address yet: "a:1 : ").
local function retry(id, state, status)
  local p = pickers[id]
  if not p or p.n == 0 then return unavailable(id, p) end
  local tried, last = {}, nil
  for a in (ngx_var.upstream_addr or ""):gmatch("[^%s,]+") do
    if a ~= ":" then tried[a] = true; last = a end
  end
  local ej
  if p.health then
    if last and (state == "failed" or health.failure_status(id, status)) then health.failed(id, last) end
    ej = health.ejected_set(id, p.keys)
  end
  local peer
  local pick = p.reissue and function(skip) return p.reissue(skip) end or function(skip) return p.algo:next(skip) end
  if ej then
    peer = pick(function(x) local k = peer_key(x); return tried[k] or ej[k] end)
  end
  peer = peer or pick(function(x) return tried[peer_key(x)] end) or p.algo:next()
  if not peer then return unavailable(id, p) end
  return use_peer(peer)
end

-- "connect send read" (seconds) → numbers, parsed once per distinct value (a handful: one per combination used).
local timeouts = {}
-- A fourth field is a Gateway API rule's retry attempts ("c s r n", or "- - - n" without timeouts of its own):
-- { connect, send, read } (nil when none) and .tries, or false when nothing usable.
local function route_timeouts(tk)
  local t = timeouts[tk]
  if t == nil then
    local head, n = tk:match("^(.-) (%d+)$")
    if not head or not head:find(" .* ") then head, n = tk, nil end
    local c, s, r = head:match("^(%d+%.?%d*) (%d+%.?%d*) (%d+%.?%d*)$")
    t = c and { tonumber(c), tonumber(s), tonumber(r) } or false
    if t and (t[1] <= 0 or t[2] <= 0 or t[3] <= 0) then t = false end
    n = tonumber(n)
    if n and n >= 1 then
      t = t or {}
      t.tries = n > 10 and 10 or n
    end
    timeouts[tk] = t
  end
  return t
end
_M.route_timeouts = route_timeouts

-- The router's hand-off (router.lua route): the backend id and timeouts it has just written into $portico_backend
-- and $portico_timeouts, with the request they are that request's values for. The first balancer call of that
-- request takes them from here instead of reading the two variables by name (a lower-cased name hashed and looked
-- up for each: the balancer's 4,956 instructions per request became 4,063, e2e/bench/dataplane-cg.ts). It holds
-- only what the variables hold: the router hands off on a request's first routing only (after an internal redirect
-- $portico_timeouts may still hold an earlier route's), every routing of any request (subrequests too) drops it
-- first, and it is taken once (a retry, the fallback below, a canary read the variables). Whatever writes
-- $portico_backend or $portico_timeouts between the router and the balancer drops it (errors.lua: forget). The
-- request is nginx's request pointer: a running request has its own, and every request that reaches a balancer
-- went through the router first (its native path included, which the balancer asks: native.lua), so a freed
-- request's pointer reused by a new one is replaced, or known to be another request's, before it can match.
local handoff_r, handoff_id, handoff_tk = nil, nil, nil
-- The router's native path (native.lua): nil without Portico's variables module.
local native = require("portico.native")
if type(native) ~= "table" then native = nil end
function _M.handoff(r, id, tk) handoff_r, handoff_id, handoff_tk = r, id, tk end
-- Whether the router handed a first attempt to nginx itself (peer_handoff, or its native path): then a balancer asks
-- the module how that attempt ended (its answer is per request: a request without a hand-off is told so).
local peer_handed = native ~= nil
-- nginx's request pointer (lua-resty-core, loaded by lua-nginx-module before any of this); none in the unit tests.
local get_request = function() return nil end
do
  local base = package.loaded["resty.core.base"]
  if type(base) == "table" and base.get_request then get_request = base.get_request end
end
function _M.forget()
  handoff_r = nil
  if peer_handed and hand then
    local r = get_request()
    if r ~= nil then hand.forget(r) end
  end
end

-- The router's pick of the first attempt's endpoint (router.lua, when the request is proxied from `location /`, the
-- only place where the balancer would run next with nothing changed): for a backend whose picker is `fast` (build),
-- the next round-robin endpoint goes straight to nginx (peer_handoff.lua), and the balancer runs only for retries.
-- r: nginx's request. Returns true when handed over.
function _M.peer_handoff(r, id)
  local p = picker(id)
  if not p or not p.fast then return false end
  local peer = p.algo:next()
  if not peer then return false end
  if not hand.handoff(r, peer.sa, peer.name, p.more) then return false end
  peer_handed = true
  return true
end

-- A backend the router's native path may balance (native.lua): its round-robin endpoints and the retries allowed
-- after the first attempt, when peer_handoff could pick them (round-robin, no canary, health checks or stickiness);
-- else nil.
function _M.fast_peers(id)
  local p = picker(id)
  if not p or not p.fast then return nil end
  return p.algo.peers, p.more
end

function _M.balance()
  local id, tk
  local handed = false
  local hr = handoff_r
  if hr ~= nil and hr == get_request() and not (native and native.native(hr)) then
    handoff_r, handed = nil, true
    id, tk = handoff_id, handoff_tk
  else
    id = ngx_var.portico_backend
  end
  local state, status = get_last_failure()
  -- The attempt before this one was the router's hand-off (ngx.balancer knows only the attempts set here).
  if not state and peer_handed and hand then
    local r = get_request()
    if r ~= nil then state, status = hand.failure(r) end
  end
  if state then return retry(id, state, status) end
  if not handed then tk = ngx_var.portico_timeouts end
  local tries
  if tk and tk ~= "" then
    local t = route_timeouts(tk)
    if t then
      if t[1] then set_timeouts(t[1], t[2], t[3]) end
      tries = t.tries
    end
  end
  local p = picker(id)
  if p then
    local c = p.canary
    if c then
      local cp = picker(c.backendId)
      if cp and use_canary(c) then
        -- The route's own backend stays the access log's $proxy_upstream_name (http.hbs), as in ingress-nginx.
        ngx_var.portico_route_backend = id
        id = c.backendId
        ngx_var.portico_backend = id
        -- ingress-nginx's canary metric label: the canary backend (the controller renders it as <ns>-<svc>-<port>).
        local mk = ngx_var.portico_mk
        if mk and mk ~= "" then ngx_var.portico_mk = mk .. "\31" .. id end
        p = cp
      end
    end
  end
  if not p or p.n == 0 then
    -- default-backend: the route's fallback serves while its backend has no usable endpoint (the router set
    -- $portico_fallback for such routes only); retries and the access log then follow the fallback.
    local fb = ngx_var.portico_fallback
    if fb and fb ~= "" and fb ~= id then
      local fp = picker(fb)
      if fp and fp.n > 0 then
        id, p = fb, fp
        ngx_var.portico_backend = fb
        -- The router named the route's backend: the access log's $proxy_upstream_name is derived again (http.hbs),
        -- from the fallback unless a canary was chosen.
        ngx_var.portico_upstream_name = ""
      end
    end
    if not p or p.n == 0 then return unavailable(id, p) end
  end
  local peer
  local ej = p.health and health.ejected_set(id, p.keys)
  if ej then
    ejected_now = ej
    if p.stick then peer = p.stick(skip_ejected) else peer = p.algo:next(skip_ejected) or p.algo:next() end
    ejected_now = nil
  elseif p.stick then
    peer = p.stick()
  else
    peer = p.algo:next()
  end
  if not peer then return unavailable(id, p) end
  local n = p.n
  -- A Gateway API rule's retries: that many more attempts, the same endpoint again when it is the only one
  -- (proxy_next_upstream_tries in its profile bounds them too); otherwise up to two other endpoints.
  if tries then set_more_tries(tries)
  elseif n > 1 then set_more_tries(more_tries(n)) end
  return use_peer(peer)
end

-- Copies in slots (http.hbs, /_portico_internal/mirror/<k>): the router put the route's targets in
-- $portico_mirror_backend, one entry per slot separated by tabs, each "<backend id>" or "<backend id> <share>" (a
-- share is the probability of a copy, 0 < share < 1; backend ids have neither spaces nor tabs). The slot is the
-- subrequest's own $uri (the only thing it does not share with the request and its other copies). Returns the
-- slot's backend id and share (nil: every request), or nil when the list has no such slot.
local find, sub, match = string.find, string.sub, string.match
local function mirror_slot(list, uri)
  local k = tonumber(match(uri or "", "/(%d+)$"))
  if not k or not list then return nil end
  local from = 1
  for _ = 1, k do
    from = find(list, "\t", from, true)
    if not from then return nil end
    from = from + 1
  end
  local to = find(list, "\t", from, true)
  local e = sub(list, from, to and to - 1 or -1)
  local sp = find(e, " ", 1, true)
  if sp then return sub(e, 1, sp - 1), tonumber(sub(e, sp + 1)) end
  return e, nil
end
_M._mirror_slot = mirror_slot

-- The rewrite phase of a copy in a slot: whether this request is copied there, drawn per request and slot (each
-- copy on its own). Not copied (or no such slot): the subrequest answers 204 itself, nothing reaches the backend.
-- Writes no variable (the request and its other copies share them).
local random = math.random
function _M.mirror_pick()
  local id, share = mirror_slot(ngx_var.portico_mirror_backend, ngx_var.uri)
  if id == nil or id == "" then return ngx.exit(204) end
  if share then
    seed()
    if random() >= share then return ngx.exit(204) end
  end
end

-- Copies of requests (mirror-target, RequestMirror; the portico_mirror_upstream block). nginx's mirror subrequests
-- share the request's variables, so this reads $portico_mirror_backend (the slot's entry for copies in slots) and
-- writes no variable: no canary, no affinity cookie, no route timeouts (the global ones), and passive health is
-- neither consulted nor fed — the copy must change nothing for the request it copies. A retry skips the endpoints
-- tried; no endpoint → the 503 socket (discarded).
function _M.balance_mirror()
  local id = ngx_var.portico_mirror_backend
  -- A list of slots (a tab or a share's space; a bare id is its own slot 0): the entry of this copy's slot.
  if id and find(id, "[\t ]") then id = mirror_slot(id, ngx_var.uri) or "" end
  local p = picker(id ~= "" and id or nil)
  if not p or p.n == 0 then return unavailable(id, p) end
  local peer
  if get_last_failure() then
    local tried = {}
    for a in (ngx_var.upstream_addr or ""):gmatch("[^%s,]+") do tried[a] = true end
    peer = p.algo:next(function(x) return tried[peer_key(x)] end)
  else
    peer = p.algo:next()
    if p.n > 1 then set_more_tries(1) end
  end
  if not peer then return unavailable(id, p) end
  return use_peer(peer)
end

-- Log phase (of the plugin location, where the router sends requests to ewma or health-checked backends): feed response times to latency-aware pickers, and report
-- attempts to passive health checking (health.log returns at once for backends without it; the plugin location's
-- log handler calls it too, which counts once).
function _M.log()
  health.log()
  local id = ngx.var.portico_backend
  if id == nil or id == "" then return end
  local p = pickers[id]
  if not p or not p.observe then return end
  local addrs, times = ngx.var.upstream_addr, ngx.var.upstream_response_time
  if not addrs or not times then return end
  local addr = addrs:match("([^,%s]+)%s*$")
  local rt = tonumber(times:match("([^,%s]+)%s*$"))
  if addr and rt then p.observe(addr, rt, ngx.now()) end
end

-- For tests.
function _M._pickers() return pickers end

return _M
