-- Unit tests for portico.health (passive health checking) with a mocked ngx and its clock: ejection after N
-- failures in a row, a success resets the count, ejections end after ejectSeconds and failure counts expire, every
-- endpoint ejected = every endpoint used, the log phase reading multi-attempt $upstream_addr/$upstream_status
-- (each attempt counted once: retried ones by the balancer, the last one in the log phase), settings changes
-- applied as data, and nothing at all for backends without passiveHealth.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local A, B, C = "10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"
local ep = mock.ep
local function ph(failures, statuses, eject) return { failures = failures, statuses = statuses, ejectSeconds = eject } end

local function setup(backends)
  local T = mock.fresh()
  local balancer = require("portico.balancer")
  balancer.configure({ unavailable = "unix:/run/portico/unavailable.sock" })
  local store = require("portico.store")
  local health = require("portico.health")
  store.apply(backends)
  store.sync()
  return T, balancer, store, health
end

-- One first attempt through the balancer; returns the peer.
local function pick(T, balancer, id)
  T.ngx.var.portico_backend = id
  T.last_failure, T.last_status = nil, nil
  local before = #T.peers
  require("portico.store").sync()
  balancer.balance()
  return T.peers[before + 1]
end

local function picks(T, balancer, id, n)
  local seen = {}
  for _ = 1, n do local p = pick(T, balancer, id); seen[p] = (seen[p] or 0) + 1 end
  return seen
end

-- The log phase of one request: $upstream_addr, $upstream_status, $upstream_header_time as nginx writes them.
local function logphase(T, health, id, addrs, statuses, header_times)
  T.ngx.ctx = {}
  T.ngx.var.portico_backend = id
  T.ngx.var.upstream_addr = addrs
  T.ngx.var.upstream_status = statuses
  T.ngx.var.upstream_header_time = header_times
  health.log()
end

-- One answered request from one peer with this status (a response header was received).
local function answer(T, health, id, peer, status)
  logphase(T, health, id, peer, tostring(status), "0.010")
end

local function count(T, id, peer) return T.ngx.shared.portico_health:get("f:" .. id .. " " .. peer) end

do -- ejection after `failures` responses in a row with a status of the list; the pickers skip it
  local T, balancer, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") }, passiveHealth = ph(3, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  answer(T, health, "web", A, 503)
  R.check("two failures of three: not ejected", not health.ejected("web", A) and count(T, "web", A) == 2, count(T, "web", A))
  local seen = picks(T, balancer, "web", 9)
  R.check("…and still picked", (seen[A] or 0) == 3, cjson.encode(seen))
  answer(T, health, "web", A, 503)
  R.check("the third failure in a row ejects it", health.ejected("web", A))
  R.check("the ejection is logged", T.logged(T.ngx.WARN, "backend web: endpoint 10%.0%.0%.1:80 ejected for 30 s after 3 failure"))
  seen = picks(T, balancer, "web", 20)
  R.check("an ejected endpoint gets no new requests", seen[A] == nil and seen[B] == 10 and seen[C] == 10, cjson.encode(seen))
  answer(T, health, "web", B, 500)
  R.check("a status not in the list is a success", count(T, "web", B) == nil)
end

do -- a success resets the count
  local T, _, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(3, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  answer(T, health, "web", A, 503)
  answer(T, health, "web", A, 200)
  R.check("a success resets the failures in a row", count(T, "web", A) == nil)
  answer(T, health, "web", A, 503)
  answer(T, health, "web", A, 503)
  R.check("success resets: 2 + 2 failures do not eject", not health.ejected("web", A))
  answer(T, health, "web", A, 503)
  R.check("…three in a row do", health.ejected("web", A))
end

do -- the ejection ends after ejectSeconds; failure counts expire after 2 x ejectSeconds
  local T, balancer, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(2, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  answer(T, health, "web", A, 503)
  R.check("ejected", health.ejected("web", A) and picks(T, balancer, "web", 4)[A] == nil)
  T.clock = T.clock + 29.5
  R.check("still ejected before ejectSeconds", health.ejected("web", A) and picks(T, balancer, "web", 4)[A] == nil)
  T.clock = T.clock + 0.6
  R.check("expiry after ejectSeconds: not ejected any more", not health.ejected("web", A))
  local seen = picks(T, balancer, "web", 4)
  R.check("…and picked again", seen[A] == 2 and seen[B] == 2, cjson.encode(seen))
  R.check("it comes back with no failures counted", count(T, "web", A) == nil)
  answer(T, health, "web", B, 503)
  T.clock = T.clock + 61
  R.check("old failures expire (2 x ejectSeconds)", count(T, "web", B) == nil)
  answer(T, health, "web", B, 503)
  R.check("…and do not add up with new ones", not health.ejected("web", B))
end

do -- every endpoint ejected: all are used
  local T, balancer, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(1, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  answer(T, health, "web", B, 503)
  R.check("both endpoints ejected", health.ejected("web", A) and health.ejected("web", B))
  local seen = picks(T, balancer, "web", 10)
  R.check("all-ejected fallback: every endpoint is used, no 503 socket", seen[A] == 5 and seen[B] == 5, cjson.encode(seen))
  R.check("the fallback is logged", T.logged(T.ngx.WARN, "backend web: every endpoint is ejected; using all of them"))
end

do -- multi-attempt requests: the retried attempt is counted by the balancer, the last one in the log phase
  local T, balancer, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(2, { 503 }, 30) } })
  local function request_with_retry()
    local first = pick(T, balancer, "web")
    -- nginx could not connect to `first` and asks the balancer for another peer
    T.last_failure, T.last_status = "failed", 502
    T.ngx.var.upstream_addr = first .. " : "
    balancer.balance()
    local second = T.peers[#T.peers]
    return first, second
  end
  local first, second = request_with_retry()
  R.check("the retry goes to the other endpoint", second ~= first, first .. " " .. second)
  R.check("the balancer counts the failed attempt", count(T, "web", first) == 1)
  T.ngx.shared.portico_health:safe_set("f:web " .. second, 1)
  logphase(T, health, "web", first .. ", " .. second, "502, 200", "-, 0.010")
  R.check("502, 200: the retried attempt is not counted again in the log phase", count(T, "web", first) == 1, count(T, "web", first))
  R.check("502, 200: the answering endpoint's count is reset", count(T, "web", second) == nil)
  -- with $upstream_addr "a:1, b:2" and $upstream_status "502, 503": the last attempt's 503 is in the list
  logphase(T, health, "web", A .. ", " .. B, "502, 503", "-, 0.010")
  R.check("502, 503: the last attempt's listed status is a failure", count(T, "web", B) == 1 and count(T, "web", A) == 1)
  T.ngx.shared.portico_health:delete("f:web " .. A)
  T.ngx.shared.portico_health:delete("f:web " .. B)
  -- a whole request (retry + log phase) is one failure of two: not ejected
  local f1, s1 = request_with_retry()
  logphase(T, health, "web", f1 .. ", " .. s1, "502, 200", "-, 0.010")
  R.check("one retried failure is one failure (failures = 2: not ejected)", not health.ejected("web", f1) and count(T, "web", f1) == 1)
end

do -- last attempts: connection errors, real responses, clients gone, the 503 socket, internal redirects
  local T, _, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(5, { 503 }, 30) } })
  logphase(T, health, "web", A, "502", "-")
  R.check("last attempt without a response header (error/timeout) counts", count(T, "web", A) == 1)
  logphase(T, health, "web", A, "504", "-")
  R.check("…a timeout too", count(T, "web", A) == 2)
  logphase(T, health, "web", A, "-", "-")
  R.check("no status (the client went away first): neither failure nor success", count(T, "web", A) == 2)
  logphase(T, health, "web", A, "502", "0.003")
  R.check("a 502 the backend answered, not in the list: a success", count(T, "web", A) == nil)
  logphase(T, health, "web", "unix:/run/portico/unavailable.sock", "503", "0.000")
  R.check("the internal 503 socket is never counted", #T.ngx.shared.portico_health:get_keys(0) == 0)
  logphase(T, health, "web", A .. " : " .. B, "503 : 200", "0.001 : 0.002")
  R.check("internal redirects: the last attempt of each upstream is counted", count(T, "web", A) == 1 and count(T, "web", B) == nil)
  logphase(T, health, "web", B, "503", nil)
  R.check("without $upstream_header_time the status list still decides", count(T, "web", B) == 1)
end

do -- two log handlers of one request (plugin location + http-level ewma handler) count it once
  local T, _, _, health = setup({ web = { endpoints = { ep("10.0.0.1") }, passiveHealth = ph(3, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  health.log()
  R.check("the log phase counts a request once", count(T, "web", A) == 1)
end

do -- no passiveHealth: nothing is counted, read or skipped
  local T, balancer, _, health = setup({ plain = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  for _ = 1, 5 do answer(T, health, "plain", A, 503) end
  R.check("no-op without passiveHealth: nothing stored", #T.ngx.shared.portico_health:get_keys(0) == 0)
  R.check("…and the request context is not touched", T.ngx.ctx.portico_health == nil)
  R.check("health.failed is a no-op too", health.failed("plain", A) == false and #T.ngx.shared.portico_health:get_keys(0) == 0)
  T.ngx.shared.portico_health:safe_set("e:plain " .. A, T.clock, 30)
  T.ngx.shared.portico_health:incr("g:plain", 1, 0)
  local seen = picks(T, balancer, "plain", 4)
  R.check("…and no endpoint is ever skipped", seen[A] == 2, cjson.encode(seen))
  logphase(T, health, "", A, "503", "0.001")
  logphase(T, health, nil, A, "503", "0.001")
  logphase(T, health, "unknown", A, "503", "0.001")
  R.check("no backend / unknown backend: nothing", count(T, "", A) == nil and count(T, "unknown", A) == nil)
end

do -- settings are data: a backend update changes them without reload, removing them stops ejection
  local T, balancer, store, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(1, { 503 }, 30) } })
  answer(T, health, "web", A, 503)
  R.check("ejected with the first settings", picks(T, balancer, "web", 4)[A] == nil)
  store.apply({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  local seen = picks(T, balancer, "web", 4)
  R.check("passiveHealth removed: the endpoint is used again at once", seen[A] == 2, cjson.encode(seen))
  answer(T, health, "web", B, 503)
  R.check("…and nothing is counted any more", count(T, "web", B) == nil and not health.ejected("web", B))
  store.apply({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(1, { 503 }, 30) } })
  R.check("passiveHealth back: the running ejection applies again", picks(T, balancer, "web", 4)[A] == nil)
  T.clock = T.clock + 10
  store.apply({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(1, { 500 }, 5) } })
  seen = picks(T, balancer, "web", 4)
  R.check("a shorter ejectSeconds takes effect at once", seen[A] == 2, cjson.encode(seen))
  answer(T, health, "web", B, 503)
  R.check("a changed status list takes effect at once", not health.ejected("web", B))
  answer(T, health, "web", B, 500)
  R.check("…the new status counts", health.ejected("web", B))
end

do -- workers agree: an ejection written by another worker is seen by the next pick
  local T, balancer, _, health = setup({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2") }, passiveHealth = ph(3, { 503 }, 30) } })
  picks(T, balancer, "web", 2)
  local d = T.ngx.shared.portico_health
  d:safe_set("e:web " .. A, T.clock, 30) -- as health.failed does in another worker
  d:incr("g:web", 1, 0)
  R.check("another worker's ejection is seen at once", picks(T, balancer, "web", 4)[A] == nil)
  d:safe_set("e:web " .. B, T.clock, 30) -- even without the generation moving (a lost key)…
  d:delete("e:web " .. A)
  T.clock = T.clock + 1.01
  local seen = picks(T, balancer, "web", 4)
  R.check("…within a second", seen[B] == nil and seen[A] == 4, cjson.encode(seen))
  R.check("health.ejected reads shared memory directly", health.ejected("web", B) == true and health.ejected("web", A) == false)
end

do -- a canary backend chosen by the balancer is the one counted
  local T, balancer, _, health = setup({
    main = { endpoints = { ep("10.0.0.1") }, canary = { backendId = "canary", weight = 100, weightTotal = 100 } },
    canary = { endpoints = { ep("10.0.0.2"), ep("10.0.0.3") }, passiveHealth = ph(1, { 503 }, 30) },
  })
  local peer = pick(T, balancer, "main")
  R.check("the canary took the request", T.ngx.var.portico_backend == "canary" and peer ~= A, tostring(peer))
  T.ngx.ctx = {}
  T.ngx.var.upstream_addr, T.ngx.var.upstream_status, T.ngx.var.upstream_header_time = peer, "503", "0.001"
  health.log()
  R.check("the canary's endpoint is ejected", health.ejected("canary", peer))
end

R.done()
