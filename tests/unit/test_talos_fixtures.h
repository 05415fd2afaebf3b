// Certificates for the talos unit tests: Ed25519 throughout, like Talos's. Made once with the
// openssl command line (100-year validity): a CA (O=talos), a client certificate signed by it
// (O=os:admin, EKU clientAuth), a server certificate for 127.0.0.1 signed by it, and a second,
// unrelated CA with its own server certificate. The fingerprints were computed independently:
//   openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary |
//   base64
#pragma once

namespace ichor::talos::fixtures {
inline constexpr const char* k_ca_crt = R"PEM(-----BEGIN CERTIFICATE-----
MIIBRjCB+aADAgECAhR6nZiWwHwsFRrxaMS/0vb84Jd2eDAFBgMrZXAwEDEOMAwG
A1UECgwFdGFsb3MwIBcNMjYxMTI5MTc1ODAyWhgPMjEyNjExMDUxNzU4MDJaMBAx
DjAMBgNVBAoMBXRhbG9zMCowBQYDK2VwAyEAen+HTUm1BvYHLIg7XOnDVaOlaYmy
N2WerM7EK0mrz2CjYzBhMB0GA1UdDgQWBBSLwaRc603mQcI/qXWJ42EKeqthejAf
BgNVHSMEGDAWgBSLwaRc603mQcI/qXWJ42EKeqthejAOBgNVHQ8BAf8EBAMCAoQw
DwYDVR0TAQH/BAUwAwEB/zAFBgMrZXADQQAs7qZvyavCxLVumdklNGg6FcRh4bpn
tuJXlDtnfOyR9dg/klSlBx3I5D5l3ij/S7ORSUTNFOTUW06Mi/ut7scM
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* k_client_crt = R"PEM(-----BEGIN CERTIFICATE-----
MIIBTjCCAQCgAwIBAgIUKjGkU/J1re3cjiUt/dH4L3t/nPcwBQYDK2VwMBAxDjAM
BgNVBAoMBXRhbG9zMCAXDTI2MTEyOTE3NTgwMloYDzIxMjYxMTA1MTc1ODAyWjAT
MREwDwYDVQQKDAhvczphZG1pbjAqMAUGAytlcAMhAOk5EMlXW3iOvABRt8UzGEnd
16nZ6j3KAIPzQS0nAzwMo2cwZTAOBgNVHQ8BAf8EBAMCB4AwEwYDVR0lBAwwCgYI
KwYBBQUHAwIwHQYDVR0OBBYEFPf5qQ3wCEMXiYgokuKhsvCDHyJDMB8GA1UdIwQY
MBaAFIvBpFzrTeZBwj+pdYnjYQp6q2F6MAUGAytlcANBAFwysfgZIrCZoA1yY4Jl
XtXH2uUETs0lui8h3ec8tk0egHpQxuOLKb6ts6pzJlb3a3C3mUSr9wa2L0B349Sg
qwI=
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* k_client_key = R"PEM(-----BEGIN ED25519 PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIA4Hmucqs+7o6YOnv/c+Q26hJiYT9Gd5p3Ds1L10fbsj
-----END ED25519 PRIVATE KEY-----
)PEM";
inline constexpr const char* k_server_crt = R"PEM(-----BEGIN CERTIFICATE-----
MIIBaDCCARqgAwIBAgIUKjGkU/J1re3cjiUt/dH4L3t/nPgwBQYDK2VwMBAxDjAM
BgNVBAoMBXRhbG9zMCAXDTI2MTEyOTE3NTgwMloYDzIxMjYxMTA1MTc1ODAyWjAP
MQ0wCwYDVQQDDARub2RlMCowBQYDK2VwAyEAvEbcCIMMBGkvLvLMTaxGOz0diaJD
IpNL5oQ8wrDCSFOjgYQwgYEwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsG
AQUFBwMBMBoGA1UdEQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAdBgNVHQ4EFgQUK7k6
FNogcNpPrSiNkKS8O1I/G8YwHwYDVR0jBBgwFoAUi8GkXOtN5kHCP6l1ieNhCnqr
YXowBQYDK2VwA0EA/BfW4zPlQ+eJHiK0RnK7/i1ykOL6InKryDlywhwqD1hDxrB4
nUsEVy893OI5oDcSVmBNE+zM03gT2TNpGIk4BA==
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* k_server_key = R"PEM(-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEILIw/DEARQt3LduudP7d9TXeVnF31LhwKuE/ahEkjrRo
-----END PRIVATE KEY-----
)PEM";
inline constexpr const char* k_other_ca_crt = R"PEM(-----BEGIN CERTIFICATE-----
MIIBRjCB+aADAgECAhRg6I1u8+02gTfeMxPlg0wJaCd4BjAFBgMrZXAwEDEOMAwG
A1UECgwFdGFsb3MwIBcNMjYxMTI5MTc1ODAyWhgPMjEyNjExMDUxNzU4MDJaMBAx
DjAMBgNVBAoMBXRhbG9zMCowBQYDK2VwAyEAV2uRETNZk/GxGoH3dmaqWCU3mj2t
S794Otu+9tMTk7+jYzBhMB0GA1UdDgQWBBQ5I0JJD3VlWl1hyBmJWbSSQo40MzAf
BgNVHSMEGDAWgBQ5I0JJD3VlWl1hyBmJWbSSQo40MzAOBgNVHQ8BAf8EBAMCAoQw
DwYDVR0TAQH/BAUwAwEB/zAFBgMrZXADQQBkMw1l4WI13MCF7Ck04UcLmMuEXCkb
vvdrOm7dLT5ZNwcos9f/ALi0F1FMfdqzHvS6jEVpwgwOaWgjXo6ma/0P
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* k_other_server_crt = R"PEM(-----BEGIN CERTIFICATE-----
MIIBaDCCARqgAwIBAgIUAdZKgNro7LZrIHtzHVToZUtUoqEwBQYDK2VwMBAxDjAM
BgNVBAoMBXRhbG9zMCAXDTI2MTEyOTE3NTgwMloYDzIxMjYxMTA1MTc1ODAyWjAP
MQ0wCwYDVQQDDARub2RlMCowBQYDK2VwAyEAhJJV1YKfm0/ITUHnRsDhN6Okv1+z
XeWNIe9is6bq8QKjgYQwgYEwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsG
AQUFBwMBMBoGA1UdEQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAdBgNVHQ4EFgQU5mCD
xGN+bbXzXGPJtUk31z6Ox80wHwYDVR0jBBgwFoAUOSNCSQ91ZVpdYcgZiVm0kkKO
NDMwBQYDK2VwA0EAxqUhuqOkpQXzv6JNh28wt5AgdZrl+O2ycbXTJcYNjRF1ufR1
uBCsscMKGr6UNPeecXGzuRHHEH0Cxy0UzPlMCA==
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* k_other_server_key = R"PEM(-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJxd2SVRNYV/a+HODXgsN395IMXyZyXyUEXsK7pU6OLa
-----END PRIVATE KEY-----
)PEM";
inline constexpr const char* k_server_fingerprint = "+yZhU8JAy9NFt1ftnV8Y1ul7AM6klD7SNFrcCJte4F4=";
inline constexpr const char* k_other_server_fingerprint =
    "unziQBuQqqDMiXlNkHUZ5177Hxvko8IRWxf/z+j18UQ=";

} // namespace ichor::talos::fixtures
