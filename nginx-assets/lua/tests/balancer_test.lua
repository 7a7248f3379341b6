-- Unit tests for portico.balancer with a mocked ngx: peer choice and retries, forbidden peers never handed to
-- nginx even when they are in shared memory, the internal 503 socket for backends without endpoints (the reason
-- goes to the error log, rate-limited), canary routing, and ejected endpoints (passive health) skipped by every
-- algorithm.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local UNAVAILABLE = mock.UNAVAILABLE
local ep = mock.ep

local function setup()
  local T = mock.fresh()
  local balancer = require("portico.balancer")
  balancer.configure({ unavailable = UNAVAILABLE })
  local store = require("portico.store")
  return T, balancer, store
end

-- Writes a backend straight into shared memory, bypassing the writer's checks (the balancer is the second end).
local function raw_put(T, id, b)
  local d = T.ngx.shared.portico_data
  local v = (d:get("v") or 0) + 1
  d:safe_set("b:" .. id, cjson.encode(b))
  d:safe_set("c:" .. v, "b:" .. id)
  d:safe_set("v", v)
end

local function request(T, balancer, id)
  T.ngx.var.portico_backend = id
  T.last_failure = nil
  local before = #T.peers
  require("portico.store").sync() -- the router does this earlier in the same request
  balancer.balance()
  return T.peers[before + 1]
end

do -- round robin over the endpoints, with retries arranged
  local T, balancer, store = setup()
  store.apply({ web = { balance = "round_robin", endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  local seen = {}
  for _ = 1, 4 do local p = request(T, balancer, "web"); seen[p] = (seen[p] or 0) + 1 end
  R.check("both endpoints get requests in turn", seen["10.0.0.1:80"] == 2 and seen["10.0.0.2:80"] == 2, cjson.encode(seen))
  R.check("one more try is allowed with two endpoints", T.tries[1] == 1)
end

do -- a Gateway API rule's retry attempts ("c s r n" / "- - - n"): that many more tries, the only endpoint again
  local T, balancer, store = setup()
  store.apply({ one = { balance = "round_robin", endpoints = { ep("10.0.0.9") } }, two = { balance = "round_robin", endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  T.ngx.var.portico_timeouts = "- - - 3"
  local first = request(T, balancer, "one")
  R.check("one endpoint: 3 more tries arranged for the rule's attempts", T.tries[#T.tries] == 3, tostring(T.tries[#T.tries]))
  R.check("  ...and no timeouts set from the placeholder", T.timeouts == nil or T.timeouts[1] == nil)
  T.ngx.var.upstream_addr = first .. " : "
  T.last_failure = "failed"
  balancer.balance()
  R.check("  ...the retry goes to the only endpoint again", T.peers[#T.peers] == first, tostring(T.peers[#T.peers]))
  T.ngx.var.portico_timeouts = "1 2 3 2"
  request(T, balancer, "two")
  R.check("timeouts and attempts together: 2 more tries", T.tries[#T.tries] == 2, tostring(T.tries[#T.tries]))
  T.ngx.var.portico_timeouts = "1 2 3"
  request(T, balancer, "two")
  R.check("timeouts alone: the other endpoint only (one more try)", T.tries[#T.tries] == 1, tostring(T.tries[#T.tries]))
  T.ngx.var.portico_timeouts = "- - - 50"
  request(T, balancer, "one")
  R.check("attempts are capped at 10", T.tries[#T.tries] == 10, tostring(T.tries[#T.tries]))
  T.ngx.var.portico_timeouts = nil
end

do -- a retry skips the peers $upstream_addr says were tried
  local T, balancer, store = setup()
  store.apply({ web = { endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
  local first = request(T, balancer, "web")
  T.ngx.var.upstream_addr = first .. " : "
  T.last_failure = "failed"
  balancer.balance()
  local second = T.peers[#T.peers]
  R.check("the retry goes to another endpoint", second ~= first and second ~= nil, first .. " then " .. tostring(second))
  T.ngx.var.upstream_addr = first .. ", " .. second .. " : "
  balancer.balance()
  local third = T.peers[#T.peers]
  R.check("a second retry skips both", third ~= first and third ~= second, third)
end

do -- forbidden peers in shared memory are still never handed to nginx
  local T, balancer = setup()
  raw_put(T, "evil", { endpoints = { ep("127.0.0.1", 10246), ep("169.254.169.254"), ep("::1"), ep("0.0.0.0"), ep("unix:/x.sock"), ep("100.100.100.200"), ep("168.63.129.16"), ep("::ffff:168.63.129.16"), ep("10.0.0.7") } })
  local peers = {}
  for _ = 1, 12 do peers[request(T, balancer, "evil")] = true end
  local list = {}
  for p in pairs(peers) do list[#list + 1] = p end
  R.check("only the routable endpoint is used", #list == 1 and list[1] == "10.0.0.7:80", table.concat(list, " "))
  R.check("each skipped endpoint is logged", T.logged(T.ngx.WARN, "127%.0%.0%.1 skipped %(loopback%)") and T.logged(T.ngx.WARN, "unix:/x%.sock skipped"))
  R.check("cloud metadata / host agent endpoints are skipped", T.logged(T.ngx.WARN, "100%.100%.100%.200 skipped %(metadata%)") and T.logged(T.ngx.WARN, "168%.63%.129%.16 skipped %(metadata%)"))
  raw_put(T, "only-loopback", { endpoints = { ep("127.0.0.1", 10246) } })
  R.check("a backend with only forbidden endpoints answers 503", request(T, balancer, "only-loopback") == UNAVAILABLE)
end

do -- IPv6 endpoints are handed over in nginx's bracketed form
  local T, balancer, store = setup()
  store.apply({ v6 = { endpoints = { ep("2001:db8::5", 8080) } } })
  R.check("IPv6 peer in brackets", request(T, balancer, "v6") == "[2001:db8::5]:8080")
end

do -- no endpoints: the internal 503 socket, the reason only in the error log and at most every 10 s
  local T, balancer, store = setup()
  store.apply({ gone = { endpoints = {}, unavailableReason = "service shop/payments not found" } })
  R.check("no endpoints → the 503 socket", request(T, balancer, "gone") == UNAVAILABLE)
  R.check("unknown backend → the 503 socket", request(T, balancer, "never-pushed") == UNAVAILABLE)
  R.check("the reason is in the error log", T.logged(T.ngx.WARN, "503 for backend gone: service shop/payments not found"))
  R.check("nothing is written to the client by Lua", #T.said == 0 and T.ngx.header["X-Portico-Reason"] == nil)
  local n = #T.logs
  for _ = 1, 50 do request(T, balancer, "gone") end
  R.check("the log line is rate-limited", #T.logs == n, #T.logs - n)
  T.clock = T.clock + 11
  request(T, balancer, "gone")
  R.check("…and repeated after 10 s", #T.logs == n + 1)
end

do -- canary by header and by weight
  local T, balancer, store = setup()
  store.apply({
    main = { endpoints = { ep("10.0.0.1") }, canary = { backendId = "canary", weight = 0, weightTotal = 100, header = "X-Canary" } },
    canary = { endpoints = { ep("10.0.0.2") } },
  })
  R.check("without the header: main", request(T, balancer, "main") == "10.0.0.1:80")
  T.ngx.var.http_x_canary = "always"
  R.check("header always: canary", request(T, balancer, "main") == "10.0.0.2:80")
  R.check("the chosen backend is recorded for logs", T.ngx.var.portico_backend == "canary")
  T.ngx.var.http_x_canary = "never"
  store.apply({ main = { endpoints = { ep("10.0.0.1") }, canary = { backendId = "canary", weight = 100, weightTotal = 100, header = "X-Canary" } } })
  R.check("header never beats weight 100", request(T, balancer, "main") == "10.0.0.1:80")
  T.ngx.var.http_x_canary = nil
  R.check("weight 100: canary", request(T, balancer, "main") == "10.0.0.2:80")
end

do -- cookie affinity: a new client gets the cookie header from the balancer; a returning one keeps its peer
  local T, balancer, store = setup()
  store.apply({ sticky = { balance = "cookie", cookie = { name = "S", mode = "balanced" }, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
  local first = request(T, balancer, "sticky")
  local header = T.ngx.header["Set-Cookie"]
  R.check("a new client gets Set-Cookie", header and header:match("^S=%x+; Path=/; HttpOnly$"), tostring(header))
  R.check("…also in $portico_set_cookie for logs", T.ngx.var.portico_set_cookie == header)
  T.ngx.var.cookie_S = header:match("^S=(%x+)")
  T.ngx.header["Set-Cookie"] = nil
  local same = true
  for _ = 1, 20 do same = same and request(T, balancer, "sticky") == first end
  R.check("the cookie keeps the client on its peer", same)
  R.check("no new cookie for a returning client", T.ngx.header["Set-Cookie"] == nil)
end

do -- affinity cookie attributes: path, domain, max-age, expires, secure (forced or on HTTPS), SameSite
  local T, balancer, store = setup()
  T.clock = 0
  store.apply({ sticky = { balance = "cookie", cookie = { name = "S", mode = "balanced", path = "/app", domain = ".example.com",
    maxAgeSeconds = 60, expiresSeconds = 86400, sameSite = "Lax" }, endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  request(T, balancer, "sticky")
  local h = T.ngx.header["Set-Cookie"]
  R.check("path, domain, max-age, expires and SameSite are attributes of the cookie",
    h and h:match("^S=%x+; Path=/app; HttpOnly; Max%-Age=60; Domain=%.example%.com; Expires=Fri, 02%-Jan%-1970 00:00:00 GMT; SameSite=Lax$"), tostring(h))
  T.ngx.header["Set-Cookie"] = nil
  T.ngx.var.https = "on"
  request(T, balancer, "sticky")
  h = T.ngx.header["Set-Cookie"]
  R.check("Secure on an HTTPS request", h and h:find("; Secure;", 1, true) ~= nil, tostring(h))
  T.ngx.var.https = nil
  store.apply({ sticky = { balance = "cookie", cookie = { name = "S", mode = "balanced", secure = true, sameSite = "None", conditionalSameSiteNone = true },
    endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  T.ngx.header["Set-Cookie"] = nil
  T.ngx.var.http_user_agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
  request(T, balancer, "sticky")
  h = T.ngx.header["Set-Cookie"]
  R.check("session-cookie-secure: Secure on plain HTTP too, SameSite=None for a current browser", h and h:match("; Secure; SameSite=None$"), tostring(h))
  T.ngx.header["Set-Cookie"] = nil
  T.ngx.var.http_user_agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/64.0.3282.140 Safari/537.36"
  request(T, balancer, "sticky")
  h = T.ngx.header["Set-Cookie"]
  R.check("conditional SameSite=None: left out for Chrome 64", h and not h:find("SameSite", 1, true), tostring(h))
  store.apply({ sticky = { balance = "cookie", cookie = { name = "S", mode = "balanced", partitioned = true, sameSite = "None" },
    endpoints = { ep("10.0.0.1"), ep("10.0.0.2") } } })
  T.ngx.header["Set-Cookie"] = nil
  T.ngx.var.http_user_agent = nil
  request(T, balancer, "sticky")
  h = T.ngx.header["Set-Cookie"]
  R.check("session-cookie-partitioned: Partitioned, and Secure even on plain HTTP (browsers require it)", h and h:match("; Secure; SameSite=None; Partitioned$"), tostring(h))
  local rejected = balancer._samesite_none_rejected
  R.check("iOS 12 and UC Browser 12.13.1 reject SameSite=None", rejected("Mozilla/5.0 (iPhone; CPU iPhone OS 12_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0 Mobile/15E148 Safari/604.1")
    and rejected("Mozilla/5.0 (Linux; U; Android 9) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 UCBrowser/12.13.1.1200 Mobile Safari/537.36"))
  R.check("iOS 13, UC Browser 12.13.2 and macOS 10.15 Safari accept it", not rejected("Mozilla/5.0 (iPhone; CPU iPhone OS 13_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.0 Mobile/15E148 Safari/604.1")
    and not rejected("Mozilla/5.0 (Linux; U; Android 9) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 UCBrowser/12.13.2.1200 Mobile Safari/537.36")
    and not rejected("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.0 Safari/605.1.15")
    and rejected("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Safari/605.1.15"))
  T.ngx.var.http_user_agent = nil
end

do -- session-cookie-change-on-failure: a retry reissues the cookie for the endpoint it goes to; without it, kept
  for _, mode in ipairs({ "balanced", "persistent" }) do
    for _, change in ipairs({ true, false }) do
      -- A balanced cookie's new key is random: many rounds (each seeded anew from the clock), every one must hold.
      local rounds = (mode == "balanced" and change) and 60 or 1
      local bad
      for round = 1, rounds do
        local T, balancer, store = setup()
        T.clock = 1000 + round * 7.31
        store.apply({ web = { balance = "cookie", cookie = { name = "S", mode = mode, changeOnFailure = change or nil }, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
        local first = request(T, balancer, "web")
        local old = T.ngx.header["Set-Cookie"]:match("^S=(%x+)")
        T.ngx.var.cookie_S = old
        T.ngx.header["Set-Cookie"] = nil
        T.ngx.var.upstream_addr = first .. " : "
        T.last_failure = "failed"
        balancer.balance()
        local second = T.peers[#T.peers]
        local h = T.ngx.header["Set-Cookie"]
        if second == first then bad = bad or ("the retry went to " .. first .. " again") end
        if change then
          -- The new cookie names the endpoint of the retry: a request with it goes there, without a new cookie.
          local v = h and h:match("^S=(%x+)")
          if not v or v == old then
            bad = bad or ("no new cookie: " .. tostring(h))
          else
            T.ngx.var.cookie_S, T.ngx.var.upstream_addr = v, nil
            T.ngx.header["Set-Cookie"] = nil
            local third = request(T, balancer, "web")
            if third ~= second or T.ngx.header["Set-Cookie"] ~= nil then
              bad = bad or ("round " .. round .. ": the new cookie " .. v .. " leads to " .. tostring(third) .. ", the retry went to " .. second)
            end
          end
        elseif h ~= nil then
          bad = bad or ("a new cookie: " .. h)
        end
      end
      R.check("cookie " .. mode .. ": the retry goes elsewhere" .. (change and ", change-on-failure reissues the cookie for the new endpoint" or ", without change-on-failure the cookie is kept"), not bad, tostring(bad))
    end
  end
end

-- Passive health checking: every algorithm skips ejected endpoints (health_test.lua covers the counting).
local PH = { failures = 1, statuses = { 503 }, ejectSeconds = 30 }
local function eject(peer, id)
  require("portico.store").sync() -- as in a request: the router synced before anything is observed
  require("portico.health").failed(id or "web", peer)
end

do -- round robin and ewma skip an ejected endpoint
  for _, algo in ipairs({ "round_robin", "ewma" }) do
    local T, balancer, store = setup()
    store.apply({ web = { balance = algo, passiveHealth = PH, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
    eject("10.0.0.1:80")
    local seen = {}
    for _ = 1, 30 do local p = request(T, balancer, "web"); seen[p] = (seen[p] or 0) + 1 end
    R.check(algo .. ": the ejected endpoint is skipped", seen["10.0.0.1:80"] == nil and seen["10.0.0.2:80"] and seen["10.0.0.3:80"], cjson.encode(seen))
    T.clock = T.clock + 31
    seen = {}
    for _ = 1, 30 do local p = request(T, balancer, "web"); seen[p] = (seen[p] or 0) + 1 end
    R.check(algo .. ": used again once the ejection ends", (seen["10.0.0.1:80"] or 0) > 0, cjson.encode(seen))
  end
end

do -- chash: a key whose endpoint is ejected falls over to one other endpoint, and comes back
  local T, balancer, store = setup()
  store.apply({ web = { balance = "chash", hashBy = "$request_uri", passiveHealth = PH, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
  local uri
  for i = 1, 200 do
    T.ngx.var.request_uri = "/item/" .. i
    if request(T, balancer, "web") == "10.0.0.1:80" then uri = T.ngx.var.request_uri; break end
  end
  T.ngx.var.request_uri = uri
  eject("10.0.0.1:80")
  local other = request(T, balancer, "web")
  local same = true
  for _ = 1, 10 do same = same and request(T, balancer, "web") == other end
  R.check("chash: an ejected endpoint's keys fall over to one other endpoint", other ~= "10.0.0.1:80" and same, tostring(other))
  T.clock = T.clock + 31
  R.check("chash: the key returns to its endpoint after the ejection", request(T, balancer, "web") == "10.0.0.1:80")
end

do -- upstream-hash-by with several variables and text ("$host$request_uri"): the key is their concatenation
  local T, balancer, store = setup()
  local key_of = balancer._key_function("$host-$request_uri:$arg_user")
  T.ngx.var.host, T.ngx.var.request_uri, T.ngx.var.arg_user = "a.example", "/x?y=1", nil
  R.check("composite key: variables and text, an unset variable adds nothing", key_of() == "a.example-/x?y=1:", tostring(key_of()))
  store.apply({ web = { balance = "chash", hashBy = "$host$request_uri", endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
  local function pick(host, uri)
    T.ngx.var.host, T.ngx.var.request_uri = host, uri
    return request(T, balancer, "web")
  end
  local stable = true
  for i = 1, 20 do stable = stable and pick("h" .. i .. ".example", "/p") == pick("h" .. i .. ".example", "/p") end
  local spread = {}
  for i = 1, 60 do spread[pick("h" .. i .. ".example", "/p")] = true end
  local n = 0
  for _ in pairs(spread) do n = n + 1 end
  R.check("composite key: the same host and URI always land on one endpoint; different hosts spread", stable and n >= 2, tostring(n))
end

do -- upstream-hash-by-subset: a key always lands in one subset of 3 (sorted endpoints cut in groups), spread inside it
  local T, balancer, store = setup()
  local eps = {}
  for i = 1, 9 do eps[i] = ep("10.0.1." .. i) end
  store.apply({ web = { balance = "chash", hashBy = "$request_uri", hashSubsetSize = 3, endpoints = eps } })
  local function group(p) local n = tonumber(p:match("^10%.0%.1%.(%d+):")); return math.floor((n - 1) / 3) end
  local groups, ok_all = {}, true
  for k = 1, 30 do
    T.ngx.var.request_uri = "/key/" .. k
    local seen, g0 = {}, nil
    for _ = 1, 24 do
      local p = request(T, balancer, "web")
      seen[p] = true
      local g = group(p)
      g0 = g0 or g
      if g ~= g0 then ok_all = false end
    end
    groups[g0] = true
    local n = 0
    for _ in pairs(seen) do n = n + 1 end
    if n < 2 then ok_all = false end
  end
  local ng = 0
  for _ in pairs(groups) do ng = ng + 1 end
  R.check("hash-by-subset: each key stays in one subset of 3 sorted endpoints and is spread over it", ok_all)
  R.check("hash-by-subset: keys are spread over the subsets", ng == 3, ng)
end

do -- cookie affinity (balanced and persistent): an ejected sticky endpoint falls over, the cookie is kept
  for _, mode in ipairs({ "balanced", "persistent" }) do
    local T, balancer, store = setup()
    store.apply({ web = { balance = "cookie", cookie = { name = "S", mode = mode }, passiveHealth = PH, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
    local first = request(T, balancer, "web")
    T.ngx.var.cookie_S = T.ngx.header["Set-Cookie"]:match("^S=(%x+)")
    T.ngx.header["Set-Cookie"] = nil
    eject(first)
    local moved = true
    for _ = 1, 10 do local p = request(T, balancer, "web"); moved = moved and p ~= first and p ~= nil end
    R.check("cookie " .. mode .. ": an ejected sticky endpoint falls over to another", moved)
    R.check("cookie " .. mode .. ": the client's cookie is not replaced", T.ngx.header["Set-Cookie"] == nil)
    T.clock = T.clock + 31
    R.check("cookie " .. mode .. ": back to its endpoint after the ejection", request(T, balancer, "web") == first)
  end
end

do -- retries skip ejected endpoints, and the failure that made nginx retry is counted
  local T, balancer, store = setup()
  store.apply({ web = { passiveHealth = { failures = 2, statuses = {}, ejectSeconds = 30 }, endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } } })
  local health = require("portico.health")
  health.failed("web", "10.0.0.3:80")
  health.failed("web", "10.0.0.3:80")
  local first = request(T, balancer, "web")
  T.ngx.var.upstream_addr = first .. " : "
  T.last_failure, T.last_status = "failed", 502
  balancer.balance()
  local second = T.peers[#T.peers]
  R.check("a retry skips tried and ejected endpoints", second ~= first and second ~= "10.0.0.3:80", first .. " then " .. second)
  R.check("the retried failure is counted for the peer that failed", T.ngx.shared.portico_health:get("f:web " .. first) == 1)
  T.ngx.var.upstream_addr = first .. ", " .. second .. " : "
  balancer.balance()
  R.check("with every other endpoint tried, an ejected one is still better than none", T.peers[#T.peers] == "10.0.0.3:80", T.peers[#T.peers])
  local before = T.ngx.shared.portico_health:get("f:web " .. first)
  T.last_failure, T.last_status = "next", 404
  T.ngx.var.upstream_addr = first .. " : "
  balancer.balance()
  R.check("nginx's 403/404 retries only count when the status is in the list", T.ngx.shared.portico_health:get("f:web " .. first) == before)
end


do -- the router's hand-off (router.lua route_set → balancer.handoff): the first balancer call of the request it
  -- names takes the backend and timeouts from it; every other call reads $portico_backend / $portico_timeouts.
  -- (The hand-off holds what the router wrote into those variables; here they differ, to see which is used.)
  local T = mock.fresh()
  local current = nil -- nginx's request pointer, as lua-resty-core's get_request returns it
  package.loaded["resty.core.base"] = { get_request = function() return current end }
  local balancer = require("portico.balancer")
  package.loaded["resty.core.base"] = nil
  balancer.configure({ unavailable = UNAVAILABLE })
  local store = require("portico.store")
  store.apply({ a = { balance = "round_robin", endpoints = { ep("10.0.0.1") } }, b = { balance = "round_robin", endpoints = { ep("10.0.0.2") } } })
  store.sync()
  local A, B = { "request A" }, { "request B" }
  local v = T.ngx.var
  local function call(r)
    current = r
    T.timeouts = nil
    local before = #T.peers
    balancer.balance()
    return T.peers[before + 1]
  end
  v.portico_backend, v.portico_timeouts = "b", nil
  balancer.handoff(A, "a", "1 2 3")
  R.check("hand-off: another request's balancer reads the variables", call(B) == "10.0.0.2:80" and T.timeouts == nil)
  R.check("hand-off: the request it names takes its backend and timeouts", call(A) == "10.0.0.1:80" and T.timeouts and T.timeouts[1] == 1 and T.timeouts[3] == 3)
  R.check("hand-off: …once (a second call reads the variables)", call(A) == "10.0.0.2:80" and T.timeouts == nil)
  balancer.handoff(A, "a", nil)
  R.check("hand-off: no timeouts handed means none (the variable is not read)", call(A) == "10.0.0.1:80" and T.timeouts == nil)
  v.portico_timeouts = "4 5 6"
  balancer.handoff(A, "a", nil)
  balancer.forget()
  R.check("hand-off: forget() drops it (errors.lua wrote the variables)", call(A) == "10.0.0.2:80" and T.timeouts and T.timeouts[1] == 4)
  balancer.handoff(nil)
  R.check("hand-off: none for a request the router did not hand off", call(A) == "10.0.0.2:80")
end

do -- the router's peer hand-off (router.lua → balancer.peer_handoff → portico_vars' ngx_http_portico_vars_peer.c):
  -- the next round-robin endpoint goes to nginx for the first attempt; the balancer runs for the retry, told how the
  -- handed attempt ended. Backends where something per request decides the endpoint are never handed over.
  local T = mock.fresh()
  local current = nil
  local handed, failures, forgot = {}, 0, {}
  local ended = nil -- what the module says about the handed attempt: { state, status }
  local standing = {} -- request -> true while its hand-off stands (the module answers per request)
  package.loaded["resty.core.base"] = { get_request = function() return current end }
  package.loaded["portico.peer_handoff"] = {
    addr = function(host, port)
      if not host:match("^%d+%.%d+%.%d+%.%d+$") then return nil end
      return "sa:" .. host .. ":" .. port, host .. ":" .. port
    end,
    handoff = function(r, sa, name, more) handed[#handed + 1] = { r = r, sa = sa, name = name, more = more }; standing[r] = true; return true end,
    failure = function(r) failures = failures + 1; if ended and standing[r] then return ended[1], ended[2] end end,
    forget = function(r) forgot[#forgot + 1] = r; standing[r] = nil end,
  }
  local balancer = require("portico.balancer")
  package.loaded["resty.core.base"] = nil
  balancer.configure({ unavailable = UNAVAILABLE })
  local store = require("portico.store")
  store.apply({
    web = { balance = "round_robin", endpoints = { ep("10.0.0.1"), ep("10.0.0.2"), ep("10.0.0.3") } },
    one = { endpoints = { ep("10.0.0.9") } },
    many = { endpoints = { ep("10.0.1.1"), ep("10.0.1.2"), ep("10.0.1.3"), ep("10.0.1.4"), ep("10.0.1.5") } },
    sticky = { balance = "cookie", affinity = { mode = "balanced", name = "route" }, endpoints = { ep("10.0.0.4"), ep("10.0.0.5") } },
    hashed = { balance = "chash", hashBy = "$remote_addr", endpoints = { ep("10.0.0.6"), ep("10.0.0.7") } },
    fast_ewma = { balance = "ewma", endpoints = { ep("10.0.0.8") } },
    canary = { endpoints = { ep("10.0.2.1") }, canary = { backendId = "one", weight = 50, weightTotal = 100 } },
    empty = { endpoints = {} },
  })
  store.sync()
  local A, B = { "request A" }, { "request B" }
  local names = {}
  for i = 1, 3 do
    R.check("peer hand-off: a round-robin backend is handed over (" .. i .. ")", balancer.peer_handoff(A, "web") == true)
    names[handed[#handed].name] = true
  end
  R.check("peer hand-off: three hand-offs, the three endpoints in turn", names["10.0.0.1:80"] and names["10.0.0.2:80"] and names["10.0.0.3:80"])
  R.check("peer hand-off: the binary address made for the endpoint goes with its name", handed[1].sa == "sa:" .. handed[1].name)
  R.check("peer hand-off: two more attempts with three endpoints", handed[1].more == 2, tostring(handed[1].more))
  balancer.peer_handoff(A, "one")
  R.check("peer hand-off: none more with one endpoint", handed[#handed].more == 0)
  balancer.peer_handoff(A, "many")
  R.check("peer hand-off: at most two more, as the balancer allows", handed[#handed].more == 2)
  local n = #handed
  for _, id in ipairs({ "sticky", "hashed", "fast_ewma", "canary", "empty", "missing" }) do
    R.check("peer hand-off: never for " .. id, balancer.peer_handoff(A, id) == false and #handed == n)
  end
  -- The handed attempt failed: the balancer's retry skips it ($upstream_addr) and asks the module how it ended.
  -- (A mirror subrequest routed in between: the routing drops the balancer's hand-off, not the question.)
  balancer.handoff(A, "web", nil)
  balancer.peer_handoff(A, "web")
  balancer.handoff(nil)
  local first = handed[#handed].name
  T.ngx.var.portico_backend = "web" -- as the router wrote it
  current = A
  T.last_failure = nil
  T.ngx.var.upstream_addr = first .. ", : "
  ended = { "failed", 502 }
  local before = #T.peers
  balancer.balance()
  local retried = T.peers[before + 1]
  R.check("peer hand-off: the retry goes to another endpoint of the backend", retried ~= nil and retried ~= first
    and retried:match("^10%.0%.0%.[123]:80$") ~= nil, tostring(retried) .. " after " .. first)
  R.check("peer hand-off: …and no more tries arranged again (the module allowed them with the hand-off)", #T.tries == 0, tostring(#T.tries))
  R.check("peer hand-off: …having asked how the handed attempt ended", failures == 1)
  -- Another request's balancer (no hand-off): the module says so, and it balances a first attempt (more tries arranged).
  current = B
  T.ngx.var.portico_backend = "web"
  T.ngx.var.upstream_addr = nil
  balancer.balance()
  R.check("peer hand-off: a request not handed over balances its first attempt", #T.tries == 1, tostring(#T.tries))
  -- errors.lua's forget(): the module drops the request's hand-off too.
  current = A
  balancer.forget()
  R.check("peer hand-off: forget() drops the module's hand-off of the request", forgot[1] == A)
  balancer.balance()
  R.check("peer hand-off: …and its balancer then balances a first attempt", #T.tries == 2, tostring(#T.tries))
  ended = nil
end

R.done()
