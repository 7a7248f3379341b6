-- Unit tests for portico.ocsp (enable-ocsp) with a mocked ngx: a handshake staples only what is kept and never
-- fetches itself; fetches are scheduled once per certificate per back-off and within a budget a minute; the fetch
-- keeps only validated answers until their nextUpdate, connects only to the vetted address, and bounds the answer.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local function pem(tag) return "-----BEGIN CERTIFICATE-----\n" .. string.rep(tag, 64) .. "\n-----END CERTIFICATE-----\n" end
local A, B = string.rep("a", 64), string.rep("b", 64)
local RESPONDER = { host = "ocsp.example.net", address = "198.51.100.7", port = 8080, path = "/ocsp" }

-- A DER-shaped answer with a nextUpdate (only the bytes ocsp.lua looks at are real).
local function answer(next_update) return "\48\130junk\160\17\24\15" .. next_update .. "more" end

-- Fresh mocks: ngx.ocsp, timers (run on demand), a socket that records what it is asked and answers `reply`.
local function setup(o)
  o = o or {}
  local T = mock.fresh()
  T.timers, T.stapled, T.connects, T.sent = {}, {}, {}, {}
  T.validate = o.validate
  T.ngx.timer = { at = function(delay, fn, ...) T.timers[#T.timers + 1] = { fn = fn, args = { ... } }; return true end }
  T.ngx.socket = { tcp = function()
    local reply = T.reply or ""
    local pos = 1
    return {
      settimeouts = function(_, c, s, r) T.timeouts = { c, s, r } end,
      connect = function(_, host, port) T.connects[#T.connects + 1] = host .. ":" .. port; return true end,
      send = function(_, data) T.sent[#T.sent + 1] = data; return #data end,
      receive = function(_, what)
        if what == "*l" then
          local nl = reply:find("\r\n", pos, true)
          if not nl then return nil, "closed" end
          local line = reply:sub(pos, nl - 1)
          pos = nl + 2
          return line
        end
        local want = what
        local rest = reply:sub(pos)
        if #rest < want then pos = #reply + 1; return nil, "closed", rest end
        pos = pos + want
        return rest:sub(1, want)
      end,
      close = function() return true end,
    }
  end }
  package.loaded["ngx.ssl"].cert_pem_to_der = function(p) return "DER:" .. p end
  package.loaded["ngx.ocsp"] = {
    create_ocsp_request = function(der) return "REQ:" .. der:sub(1, 8) end,
    validate_ocsp_response = function(resp) if T.validate then return T.validate(resp) end; return true end,
    set_ocsp_status_resp = function(resp) T.stapled[#T.stapled + 1] = resp; return true end,
  }
  package.loaded["portico.ocsp"] = nil
  return T, require("portico.ocsp"), require("portico.certs")
end

local function store(certs, ocsp_responder)
  certs.apply({ [A] = { cert = pem("x"), key = pem("k"), source = "ns/a", ocsp = ocsp_responder }, [B] = { cert = pem("y"), key = pem("k"), source = "ns/b" } },
    { ["a.example.com"] = A, ["b.example.com"] = B }, nil, nil)
end

do -- nextUpdate and TTLs
  local _, ocsp = setup()
  R.check("ocsp: UTC dates", ocsp.utc(1970, 1, 1, 0, 0, 0) == 0 and ocsp.utc(2000, 3, 1, 12, 0, 1) == 951912001 and ocsp.utc(2026, 11, 27, 0, 0, 0) == 1795737600)
  R.check("ocsp: nextUpdate read from the answer", ocsp.next_update(answer("20261127000000Z")) == 1795737600)
  R.check("ocsp: no nextUpdate", ocsp.next_update("\48\130\24\15" .. "20261127000000Z") == nil)
  R.check("ocsp: kept until nextUpdate", ocsp.ttl(answer("20261127000000Z"), 1795737600 - 7200) == 7200)
  R.check("ocsp: at most MAX_TTL", ocsp.ttl(answer("20991127000000Z"), 1795737600) == ocsp.MAX_TTL)
  R.check("ocsp: an answer past (or near) its nextUpdate is not kept", ocsp.ttl(answer("20261127000000Z"), 1795737600 - 10) == nil)
  R.check("ocsp: DEFAULT_TTL without nextUpdate", ocsp.ttl("plain", 0) == ocsp.DEFAULT_TTL)
end

do -- the handshake: staples only what is kept, schedules a fetch, never fetches itself
  local T, ocsp, certs = setup()
  store(certs, RESPONDER)
  T.sni = "a.example.com"
  certs.select(false, true)
  R.check("ocsp: nothing kept yet: nothing stapled", #T.stapled == 0)
  R.check("ocsp: a fetch is scheduled, not run in the handshake", #T.timers == 1 and #T.connects == 0)
  certs.select(false, true)
  R.check("ocsp: one fetch per certificate per back-off, however many handshakes", #T.timers == 1)
  T.sni = "b.example.com"
  certs.select(false, true)
  R.check("ocsp: a certificate without responder schedules nothing", #T.timers == 1)
  T.sni = "a.example.com"
  certs.select(false, false)
  R.check("ocsp: enable-ocsp off: nothing stapled or scheduled", #T.timers == 1 and #T.stapled == 0)

  T.clock = 1795737600 - 86400
  T.reply = "HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\nContent-Length: " .. #answer("20261127000000Z") .. "\r\n\r\n" .. answer("20261127000000Z")
  local t = T.timers[1]
  t.fn(false, unpack(t.args))
  R.check("ocsp: the fetch connects to the vetted address only", T.connects[1] == "198.51.100.7:8080", T.connects[1])
  R.check("ocsp: a POST with the responder's Host and path", T.sent[1]:find("^POST /ocsp HTTP/1.0\r\nHost: ocsp.example.net\r\n") ~= nil, T.sent[1])
  R.check("ocsp: timeouts are set", T.timeouts and T.timeouts[1] == ocsp.TIMEOUT_MS and T.timeouts[3] == ocsp.TIMEOUT_MS)
  local d = T.ngx.shared.portico_certs
  R.check("ocsp: the answer is kept until its nextUpdate", d:get("o:" .. A) == answer("20261127000000Z") and math.abs(d:ttl("o:" .. A) - 86400) < 2, tostring(d:ttl("o:" .. A)))
  certs.select(false, true)
  R.check("ocsp: the next handshake staples it", T.stapled[1] == answer("20261127000000Z"))
  T.clock = T.clock + 43200 + 61
  certs.select(false, true)
  R.check("ocsp: after half its life it is still stapled and a refresh is scheduled", T.stapled[2] == answer("20261127000000Z") and #T.timers == 2)
end

do -- answers that are not kept; a responder the Lua side refuses
  local T, ocsp, certs = setup({ validate = function() return nil, "certificate status \"revoked\"" end })
  store(certs, RESPONDER)
  T.clock = 1795737600 - 86400
  T.reply = "HTTP/1.0 200 OK\r\n\r\n" .. answer("20261127000000Z")
  ocsp.fetch(false, A)
  local d = T.ngx.shared.portico_certs
  R.check("ocsp: an answer that does not validate (revoked, wrong signer) is not kept", d:get("o:" .. A) == nil and T.logged(T.ngx.WARN, "revoked"))
  T.validate = nil
  T.reply = "HTTP/1.0 500 Oops\r\n\r\n"
  ocsp.fetch(false, A)
  R.check("ocsp: a responder error keeps nothing", d:get("o:" .. A) == nil and T.logged(T.ngx.WARN, "500"))
  T.reply = "HTTP/1.0 200 OK\r\nContent-Length: 999999\r\n\r\n"
  ocsp.fetch(false, A)
  R.check("ocsp: an answer over MAX_RESPONSE is dropped", d:get("o:" .. A) == nil and T.logged(T.ngx.WARN, "over"))
  T.reply = "HTTP/1.0 200 OK\r\n\r\n" .. string.rep("x", ocsp.MAX_RESPONSE + 10)
  ocsp.fetch(false, A)
  R.check("ocsp: …also without Content-Length", d:get("o:" .. A) == nil)
  -- A stored responder the Lua side refuses (the controller vets first; this is the second check).
  local raw = cjson.decode(d:get("c:" .. A))
  raw.ocsp.address = "127.0.0.1"
  d:safe_set("c:" .. A, cjson.encode(raw))
  local before = #T.connects
  ocsp.fetch(false, A)
  R.check("ocsp: never connects to loopback", #T.connects == before and T.logged(T.ngx.WARN, "loopback"))
end

do -- the budget: at most MAX_PER_MINUTE fetches a minute, all certificates together
  local T, ocsp = setup()
  local n = 0
  for i = 1, ocsp.MAX_PER_MINUTE + 20 do if ocsp.schedule("id" .. i) then n = n + 1 end end
  R.check("ocsp: fetches a minute are capped", n == ocsp.MAX_PER_MINUTE and #T.timers == ocsp.MAX_PER_MINUTE, n)
  T.clock = T.clock + 61
  R.check("ocsp: the budget comes back after a minute", ocsp.schedule("later"))
end

do -- validation of what the controller sends
  mock.fresh()
  local validate = require("portico.validate")
  local function body(o) return { certificates = { [A] = { cert = pem("x"), key = "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n", source = "ns/a", ocsp = o } } } end
  R.check("ocsp validate: a vetted responder passes", validate.certificates_body(body(RESPONDER)) == nil, tostring((validate.certificates_body(body(RESPONDER)))))
  local bad = {
    { host = "h", address = "127.0.0.1", port = 80, path = "/" }, { host = "h", address = "169.254.169.254", port = 80, path = "/" },
    { host = "h", address = "ocsp.example.net", port = 80, path = "/" }, { host = "h", address = "198.51.100.7", port = 0, path = "/" },
    { host = "h\r\nX: y", address = "198.51.100.7", port = 80, path = "/" }, { host = "h", address = "198.51.100.7", port = 80, path = "/a b" },
    { host = "h", address = "198.51.100.7", port = 80, path = "x" }, "string",
  }
  local refused = 0
  for _, o in ipairs(bad) do if validate.certificates_body(body(o)) then refused = refused + 1 end end
  R.check("ocsp validate: loopback, link-local, names, bad ports, header injection, bad paths refused", refused == #bad, refused)
end

R.done()
