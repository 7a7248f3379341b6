-- client-cert: ingress-nginx's auth-tls-* for the paths of one Ingress. The TLS handshake asked for a client
-- certificate with the host's CA (certs.lua; nginx never refuses the handshake for it), and this checks the outcome
-- per request, as nginx's ssl_verify_client would:
--   on              $ssl_client_verify must be SUCCESS;
--   optional        SUCCESS or NONE (no certificate);
--   optional_no_ca  also FAILED for an issuer that is unknown or self-signed (nginx's optional_no_ca list);
--   off             nothing is checked (ssl-client-verify: NONE for the backend).
-- A request that fails is answered 400, or 302 to the errorPage (nginx's error_page 495 496). A plain-HTTP
-- request has no certificate: NONE (so `on` refuses it; ingress-nginx would serve it unchecked).
-- Over HTTPS the certificate was verified against the CA of the TLS server name (SNI), so:
--   - the Host must be the server name (421 Misdirected Request otherwise: a certificate of tenant A's CA, verified
--     in a handshake for A, must not open tenant B's host on the same connection);
--   - a certificate must have been verified against this path's CA configuration, which the TLS session records
--     (tlsctx.lua): a connection made before the CA changed, or for another host's CA, gets 421 — the client opens
--     a new connection, whose handshake asks with the current CA. (Sessions are resumed only under the CA
--     configuration they were verified with, see tlsctx.lua.)
-- matchCn: a PCRE the subject DN must match (unanchored, as ingress-nginx's `$ssl_client_s_dn !~`), else 403.
-- The backend gets ssl-client-verify, ssl-client-subject-dn and ssl-client-issuer-dn, and with passCertificate
-- ssl-client-cert (the PEM, URL-encoded: $ssl_client_escaped_cert); whatever the client sent under those names is
-- removed first, so it can never forge them.
local util = require("portico.plugins.util")
local tlsctx = require("portico.tlsctx")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "client-cert"
_M.order = 0

-- What nginx's optional_no_ca lets through (X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, _SELF_SIGNED_CERT_IN_CHAIN,
-- _UNABLE_TO_GET_ISSUER_CERT_LOCALLY, _CERT_UNTRUSTED, _UNABLE_TO_VERIFY_LEAF_SIGNATURE), as OpenSSL 1.1 and 3
-- word them in $ssl_client_verify ("FAILED:<reason>").
local OPTIONAL_NO_CA = {
  ["self signed certificate"] = true, ["self-signed certificate"] = true,
  ["self signed certificate in certificate chain"] = true, ["self-signed certificate in certificate chain"] = true,
  ["unable to get local issuer certificate"] = true,
  ["certificate not trusted"] = true,
  ["unable to verify the first certificate"] = true,
}
_M.OPTIONAL_NO_CA = OPTIONAL_NO_CA

local HEADERS = { "ssl-client-cert", "ssl-client-verify", "ssl-client-subject-dn", "ssl-client-issuer-dn" }

local function set(name, value)
  if value ~= nil and value ~= "" then ngx.req.set_header(name, value) else ngx.req.clear_header(name) end
end

-- A request without a usable certificate: 400 (nginx's 495/496), or the error page.
local function refuse(self, body)
  if self.error_page then return util.deny(302, { Location = self.error_page }, "Redirecting") end
  return util.deny(400, nil, body)
end

local function misdirected()
  return util.deny(421, nil, "Misdirected Request")
end

local function access(self)
  local req = ngx.req
  for i = 1, #HEADERS do req.clear_header(HEADERS[i]) end
  local var = ngx.var
  local https = var.https == "on"
  if self.verify == "off" then
    if https then req.set_header("ssl-client-verify", "NONE") end
    return false
  end
  local verify = "NONE"
  if https then
    local sni = var.ssl_server_name
    if type(sni) ~= "string" or sni:lower():gsub("%.$", "") ~= var.host then return misdirected() end
    verify = var.ssl_client_verify or "NONE"
    if verify ~= "NONE" and tlsctx.get() ~= self.ca then return misdirected() end
  end
  if verify == "NONE" then
    if self.verify == "on" then return refuse(self, "No required SSL certificate was sent") end
  elseif verify ~= "SUCCESS" then
    local reason = verify:match("^FAILED:(.*)$")
    if not (self.verify == "optional_no_ca" and reason and OPTIONAL_NO_CA[reason]) then
      return refuse(self, "The SSL certificate error")
    end
  end
  local sdn = https and var.ssl_client_s_dn or nil
  if self.match_cn then
    local from, _, err = ngx.re.find(sdn or "", self.match_cn, "jo")
    if not from then
      if err then util.log_every("matchcn:" .. self.match_cn, ngx.ERR, "portico: auth-tls-match-cn ", self.match_cn, ": ", err) end
      return util.deny(403, nil, "Client certificate not authorized")
    end
  end
  if https then
    set("ssl-client-verify", verify)
    set("ssl-client-subject-dn", sdn)
    set("ssl-client-issuer-dn", var.ssl_client_i_dn)
    if self.pass then set("ssl-client-cert", var.ssl_client_escaped_cert) end
  end
  return false
end

function _M.new(conf)
  if conf.matchCn ~= nil then
    -- A pattern PCRE refuses makes the instance unusable: its paths answer 503 (fail closed), nothing else does.
    local ok, from, _, err = pcall(ngx.re.find, "", conf.matchCn, "jo")
    if not ok or err then error("auth-tls-match-cn does not compile: " .. tostring(ok and err or from)) end
  end
  return {
    verify = conf.verify,
    ca = conf.caId,
    error_page = conf.errorPage,
    pass = conf.passCertificate == true,
    match_cn = conf.matchCn,
    access = access,
  }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, bool_or_nil = C.str, C.bool_or_nil
-- The redirect target of auth-tls-error-page is an absolute http(s) URL of RFC 3986 characters without user info,
-- fragment, quotes, spaces or "$"; match-cn a regex of printable characters.
local VERIFY_CLIENT = { on = true, off = true, optional = true, optional_no_ca = true }
local ERROR_PAGE = "^[Hh][Tt][Tt][Pp][Ss]?://[%w%.%-]+[%w%.%-_~!&%*%+,=:@%%/%?]*$"

-- The client-cert fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if not VERIFY_CLIENT[p.verify] then return "verify must be on, off, optional or optional_no_ca" end
  if p.verify ~= "off" or p.caId ~= nil then
    if not str(p.caId, 30, "^[0-9a-f]+$") or #p.caId ~= 30 then return "invalid caId" end
  end
  if p.errorPage ~= nil and (not str(p.errorPage, 2048, ERROR_PAGE) or p.errorPage:match("^[^:]+://([^/?]*)"):find("@", 1, true)) then
    return "errorPage must be an absolute http(s) URL (no user info, variables, quotes or spaces)"
  end
  if not bool_or_nil(p.passCertificate) then return "passCertificate must be a boolean" end
  -- (Whether PCRE compiles it is the plugin's business: one that does not fails its paths closed, not this push.)
  if p.matchCn ~= nil and (not str(p.matchCn, 256, "^[\32-\126]+$") or p.matchCn:find("[{};#\"'`]")) then
    return "matchCn: printable ASCII without braces, quotes, \";\" or \"#\""
  end
end

return _M
