"""`ktune serve --tls-cert/--tls-key`: with a throwaway self-signed certificate made by the openssl
command, HTTPS answers correctly and only to a client that trusts that certificate, plain HTTP on the
same port gets no answer, and a certificate with another certificate's key is refused at start."""

import http.client
import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import KTUNE, Server, expected_facts


def make_certificate(directory, name):
    """A self-signed certificate for 127.0.0.1 and its key (PEM files), valid for a day."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=120)
    return cert, key


@pytest.fixture
def certificates(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is missing (scripts/install-deps.sh installs it): it makes the "
                    "test's certificates")
    return make_certificate(tmp_path, "server"), make_certificate(tmp_path, "other")


def https_get(url, cafile=None):
    context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    with urllib.request.urlopen(url, context=context, timeout=30) as r:
        return r.status, r.read().decode()


def test_https_answers_with_the_given_certificate(certificates, fixture_db):
    (cert, key), _ = certificates
    s = Server(["--db", str(fixture_db), "--tls-cert", str(cert), "--tls-key", str(key), "--devices", "none"])
    try:
        assert s.url.startswith("https://127.0.0.1:"), s.url
        facts = expected_facts()
        status, body = https_get(f"{s.url}/v1/best?gpu=Test%20GPU%20Alpha&kernel=gemm&shape=m=16,n=4096,k=4096"
                                 "&dtype=bf16", cafile=cert)
        assert status == 200
        assert json.loads(body)["config_name"] == facts["exact_config"]
        # A client that does not trust this certificate refuses the connection: the server really
        # presents the certificate it was given, not some default.
        with pytest.raises(urllib.error.URLError) as refused:
            https_get(f"{s.url}/v1/health")
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError), refused.value
        # Plain HTTP to the TLS port gets no HTTP answer.
        port = int(s.url.rsplit(":", 1)[1])
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with pytest.raises((http.client.HTTPException, OSError)):
            plain.request("GET", "/v1/health")
            plain.getresponse().read()
        plain.close()
        # ... and the server goes on answering HTTPS.
        status, body = https_get(f"{s.url}/v1/health", cafile=cert)
        assert status == 200 and json.loads(body)["status"] == "ok"
    finally:
        assert s.stop() == 0, s.stderr


def run_serve(args):
    return subprocess.run([KTUNE, "serve", "--listen", "127.0.0.1:0", "--devices", "none"] + args,
                          capture_output=True, text=True, timeout=60)


def test_a_bad_certificate_or_key_is_refused_at_start(certificates, fixture_db, tmp_path):
    (cert, key), (_, other_key) = certificates
    mismatched = run_serve(["--db", str(fixture_db), "--tls-cert", str(cert), "--tls-key", str(other_key)])
    assert mismatched.returncode == 2, mismatched.stderr
    assert "not the private key of the certificate" in mismatched.stderr, mismatched.stderr
    assert str(other_key) in mismatched.stderr and str(cert) in mismatched.stderr
    swapped = run_serve(["--db", str(fixture_db), "--tls-cert", str(key), "--tls-key", str(cert)])
    assert swapped.returncode == 2 and "no PEM certificate" in swapped.stderr, swapped.stderr
    missing = run_serve(["--db", str(fixture_db), "--tls-cert", str(tmp_path / "none.pem"), "--tls-key", str(key)])
    assert missing.returncode == 2 and "cannot read" in missing.stderr, missing.stderr
    alone = run_serve(["--db", str(fixture_db), "--tls-cert", str(cert)])
    assert alone.returncode == 2 and "go together" in alone.stderr, alone.stderr
