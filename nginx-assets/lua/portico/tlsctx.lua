-- Which client-certificate CA a TLS connection was verified against, carried by the TLS session's id context
-- (OpenSSL's sid_ctx, at most 32 bytes): "pc" followed by the 30-hex-digit id of the CA configuration
-- (DataPlane.clientAuth). Set in the handshake (certs.lua), read per request (plugins/client_cert.lua).
--
-- OpenSSL resumes a session only when its id context equals the connection's. The client-hello handler sets the
-- connection's to the id the server name asks with, so a session is resumed only under the very CA configuration
-- it was verified with: never one made for another host's CA (a client could otherwise verify against tenant A's CA
-- and resume that session with tenant B's name), never one from before a CA change, never one without a
-- certificate onto a host that asks for one (and not the other way round). The certificate handler sets the new
-- session's id context to the id it actually verified with (the configuration may have changed in between).
-- A connection to a host without client certificates keeps nginx's own id context, unless the host has a cipher
-- list of its own (ssl-ciphers): then "pk" and its certificate id, so a TLS 1.2 session (whose cipher was chosen
-- under one host's list) is resumed only on a host with the same certificate and list.
local ffi = require("ffi")
local base = require("resty.core.base")

for _, decl in ipairs({
  "void *ngx_http_lua_ffi_get_req_ssl_pointer(void *r);",
  "int SSL_set_session_id_context(void *ssl, const unsigned char *sid_ctx, unsigned int sid_ctx_len);",
  "void *SSL_get_session(const void *ssl);",
  "int SSL_SESSION_set1_id_context(void *s, const unsigned char *sid_ctx, unsigned int sid_ctx_len);",
  "const unsigned char *SSL_SESSION_get0_id_context(const void *s, unsigned int *len);",
  "int SSL_set_cipher_list(void *ssl, const char *str);",
  "void SSL_set_verify(void *ssl, int mode, void *cb);",
}) do
  pcall(ffi.cdef, decl)
end
local C = ffi.C

local _M = {}

local PREFIX = "pc"

local function ssl_pointer()
  local r = base.get_request()
  if not r then return nil end
  local s = C.ngx_http_lua_ffi_get_req_ssl_pointer(r)
  if s == nil then return nil end
  return s
end

-- Handshake, client hello: sessions resumed on this connection must have been made under CA configuration `id`
-- (or, with `prefix` "pk", for the certificate and cipher list `id` of a host with its own ssl-ciphers).
function _M.set_connection(id, prefix)
  local s = ssl_pointer()
  if not s then return nil, "no TLS connection" end
  local v = (prefix or PREFIX) .. id
  if C.SSL_set_session_id_context(s, v, #v) ~= 1 then return nil, "SSL_set_session_id_context failed" end
  return true
end

-- Handshake, certificate: the session being made was verified against CA configuration `id`.
function _M.set_session(id)
  local s = ssl_pointer()
  local sess = s and C.SSL_get_session(s)
  if not sess or sess == nil then return nil, "no TLS session" end
  local v = PREFIX .. id
  if C.SSL_SESSION_set1_id_context(sess, v, #v) ~= 1 then return nil, "SSL_SESSION_set1_id_context failed" end
  return true
end

-- Handshake, certificate: the connection's cipher list for TLS ≤ 1.2 (ssl-ciphers), in place of ssl_ciphers'.
-- OpenSSL chooses the TLS 1.2 cipher after the certificate callback, from this list.
function _M.set_ciphers(list)
  local s = ssl_pointer()
  if not s then return nil, "no TLS connection" end
  if C.SSL_set_cipher_list(s, list) ~= 1 then return nil, "OpenSSL matches no cipher in the list" end
  return true
end

local SSL_VERIFY_PEER = 0x01
local SSL_VERIFY_FAIL_IF_NO_PEER_CERT = 0x02

-- Handshake, certificate (after ngx.ssl.verify_client): a client that sends no certificate fails the handshake (a
-- Gateway port's AllowValidOnly). The verify callback stays nginx's, which accepts every certificate (nginx reads the
-- outcome per request, and so does router.lua for such a port: a certificate that did not verify gets no answer).
function _M.require_certificate()
  local s = ssl_pointer()
  if not s then return nil, "no TLS connection" end
  C.SSL_set_verify(s, SSL_VERIFY_PEER + SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
  return true
end

-- Request: the id of the CA configuration the connection's certificate was verified against, or nil.
function _M.get()
  local s = ssl_pointer()
  local sess = s and C.SSL_get_session(s)
  if not sess or sess == nil then return nil end
  local len = ffi.new("unsigned int[1]")
  local p = C.SSL_SESSION_get0_id_context(sess, len)
  if p == nil or len[0] <= #PREFIX then return nil end
  local v = ffi.string(p, len[0])
  if v:sub(1, #PREFIX) ~= PREFIX then return nil end
  return v:sub(#PREFIX + 1)
end

return _M
