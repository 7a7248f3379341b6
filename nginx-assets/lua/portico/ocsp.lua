-- OCSP stapling (the ConfigMap's enable-ocsp), called by certs.lua once a handshake's certificate is chosen.
--
-- A handshake never waits for a responder: it staples the answer shared memory holds for its certificate, if any,
-- and when there is none (or it is due for a refresh) asks for a fetch that runs in a timer afterwards. So the first
-- handshakes of a certificate go without a staple, as with ingress-nginx.
--
-- The responder comes from a tenant's certificate, so what a tenant can make nginx do is bounded:
--   * the controller sends the one address to connect to, vetted (no loopback, link-local, pod, Service or Portico
--     address: nginx-driver/ocsp-responders.ts); it is checked again here (peers.lua), and no name is resolved;
--   * one fetch per certificate per BACKOFF seconds across all workers (a lock key with that lifetime), and at most
--     MAX_PER_MINUTE fetches a minute in all (a counter that expires), so handshakes cannot multiply requests;
--   * connect, send and read time out after TIMEOUT_MS; an answer over MAX_RESPONSE bytes is dropped.
-- Only an answer that ngx.ocsp validates against the certificate chain (signed, matching, status good) is kept,
-- under "o:<id>" in portico_certs until its nextUpdate (at most MAX_TTL; DEFAULT_TTL without one), and "or:<id>"
-- marks it fresh for half of that: after that, a handshake still staples it and asks for a refresh. Writes never
-- evict (shm.lua): a full zone keeps nothing new and is logged and counted.
local ssl = require("ngx.ssl")
local ngx_ocsp = require("ngx.ocsp")
local cjson = require("cjson.safe")
local peers = require("portico.peers")
local shm = require("portico.shm")
local dict = ngx.shared.portico_certs

local _M = {}

_M.BACKOFF = 60
_M.MAX_PER_MINUTE = 30
_M.TIMEOUT_MS = 3000
_M.MAX_RESPONSE = 65536
_M.MAX_TTL = 7 * 86400
_M.DEFAULT_TTL = 3600
_M.MIN_TTL = 60

-- Seconds since the epoch of a UTC civil date (days from civil, proleptic Gregorian).
local function utc(y, mo, d, h, mi, s)
  if mo <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (mo + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + h * 3600 + mi * 60 + s
end
_M.utc = utc

-- The nextUpdate of the first SingleResponse of a DER OCSP response, in seconds since the epoch, or nil: a
-- context-specific [0] of 17 bytes holding a 15-byte GeneralizedTime "YYYYMMDDHHMMSSZ" (nothing else in an OCSP
-- response has that shape: the version's [0] holds 3 bytes, responseBytes' is far longer).
function _M.next_update(der)
  if type(der) ~= "string" then return nil end
  local y, mo, d, h, mi, s = der:match("\160\17\24\15(%d%d%d%d)(%d%d)(%d%d)(%d%d)(%d%d)(%d%d)Z")
  if not y then return nil end
  return utc(tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi), tonumber(s))
end

-- How long to keep an answer: until its nextUpdate, within [MIN_TTL, MAX_TTL]; DEFAULT_TTL without one.
function _M.ttl(der, now)
  local nu = _M.next_update(der)
  if not nu then return _M.DEFAULT_TTL end
  local t = nu - now
  if t > _M.MAX_TTL then t = _M.MAX_TTL end
  if t < _M.MIN_TTL then return nil end -- (nearly) expired: not worth keeping
  return math.floor(t)
end

local function warn(id, ...)
  ngx.log(ngx.WARN, "portico: OCSP for certificate ", id, ": ", ...)
end

-- One HTTP/1.0 POST to the vetted address; the body, or nil and why.
local function post(r, body)
  local sock = ngx.socket.tcp()
  sock:settimeouts(_M.TIMEOUT_MS, _M.TIMEOUT_MS, _M.TIMEOUT_MS)
  local ok, err = sock:connect(r.address, r.port)
  if not ok then return nil, "connect " .. r.address .. ":" .. r.port .. ": " .. tostring(err) end
  local req = "POST " .. r.path .. " HTTP/1.0\r\nHost: " .. r.host .. "\r\nContent-Type: application/ocsp-request\r\n"
    .. "Accept: application/ocsp-response\r\nContent-Length: " .. #body .. "\r\nConnection: close\r\n\r\n" .. body
  ok, err = sock:send(req)
  if not ok then sock:close(); return nil, "send: " .. tostring(err) end
  local line
  line, err = sock:receive("*l")
  local status = line and line:match("^HTTP/1%.[01] (%d%d%d)")
  if status ~= "200" then sock:close(); return nil, "responder answered " .. tostring(line or err) end
  local length
  local headers = 0
  repeat
    line, err = sock:receive("*l")
    if not line then sock:close(); return nil, "reading headers: " .. tostring(err) end
    headers = headers + 1
    local v = line:lower():match("^content%-length:%s*(%d+)%s*$")
    if v then length = tonumber(v) end
  until line == "" or headers > 64
  if line ~= "" then sock:close(); return nil, "too many response headers" end
  if length and length > _M.MAX_RESPONSE then sock:close(); return nil, "answer of " .. length .. " bytes is over " .. _M.MAX_RESPONSE end
  local data, partial
  data, err, partial = sock:receive(length or (_M.MAX_RESPONSE + 1))
  sock:close()
  if not data then
    if length or err ~= "closed" then return nil, "reading the answer: " .. tostring(err) end
    data = partial
  end
  if #data > _M.MAX_RESPONSE then return nil, "answer over " .. _M.MAX_RESPONSE .. " bytes" end
  return data
end

-- The timer: fetch, validate and keep the answer for certificate `id`.
function _M.fetch(premature, id)
  if premature then return end
  local raw = dict:get("c:" .. id)
  local c = raw and cjson.decode(raw)
  if type(c) ~= "table" or type(c.ocsp) ~= "table" then return end
  local r = c.ocsp
  local address, why = peers.check(r.address)
  if not address or not peers.valid_port(r.port) then return warn(id, "responder address refused: ", tostring(why or r.port)) end
  r.address = address -- IPv6 in brackets, as cosockets take it
  local der, err = ssl.cert_pem_to_der(c.cert)
  if not der then return warn(id, "cannot convert the chain: ", err) end
  local req
  req, err = ngx_ocsp.create_ocsp_request(der)
  if not req then return warn(id, "cannot make a request (is the issuer in the chain?): ", err) end
  local answer
  answer, err = post(r, req)
  if not answer then return warn(id, r.host, ": ", err) end
  local ok
  ok, err = ngx_ocsp.validate_ocsp_response(answer, der)
  if not ok then return warn(id, r.host, ": answer not used: ", err) end
  local ttl = _M.ttl(answer, ngx.time())
  if not ttl then return warn(id, r.host, ": answer expires within ", _M.MIN_TTL, " s: not used") end
  if shm.set(dict, "certs", "o:" .. id, answer, ttl) then
    shm.set(dict, "certs", "or:" .. id, true, math.max(math.floor(ttl / 2), _M.MIN_TTL))
  end
end

-- Asks for a fetch unless one ran for this certificate within BACKOFF seconds or the minute's budget is spent.
-- Returns true when a fetch was scheduled.
function _M.schedule(id)
  if not dict:safe_add("ol:" .. id, true, _M.BACKOFF) then return false end
  if dict:safe_add("on", 0, 60) == nil and dict:get("on") == nil then return false end
  local n = dict:incr("on", 1)
  if not n or n > _M.MAX_PER_MINUTE then return false end
  local ok, err = ngx.timer.at(0, _M.fetch, id)
  if not ok then ngx.log(ngx.WARN, "portico: OCSP fetch for certificate ", id, " not scheduled: ", err); return false end
  return true
end

-- In the handshake (certs.lua select): staple what is kept for certificate `id`; ask for a fetch when there is
-- nothing or it is due for a refresh, if the certificate names a responder.
function _M.staple(id, has_responder)
  local answer = dict:get("o:" .. id)
  if answer then
    local ok, err = ngx_ocsp.set_ocsp_status_resp(answer)
    if not ok then ngx.log(ngx.WARN, "portico: stapling OCSP for certificate ", id, ": ", err) end
  end
  if has_responder and (not answer or not dict:get("or:" .. id)) then _M.schedule(id) end
  return answer ~= nil
end

return _M
