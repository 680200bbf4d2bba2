"""version.json.sig: SSHSIG made by fdl verifies with stock ssh-keygen, and
one ssh-keygen makes verifies with fdl."""
import json
import subprocess

import pytest

from conftest import commits, fdl


@pytest.fixture
def signed_repo(repo, tmp_path):
    commits(repo, tmp_path / "w", ("one", ["CREATE TABLE lake.t (a INTEGER)"]),
            ("two", ["INSERT INTO lake.t VALUES (1)"]))
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", str(key)], check=True)
    pub = (tmp_path / "key.pub").read_text().split()
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'ann@example.org namespaces="fdl" {pub[0]} {pub[1]}\n')
    return repo, key, allowed


def ssh_verify(allowed, vdir, identity="ann@example.org", namespace="fdl"):
    with open(vdir / "version.json", "rb") as f:
        return subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", identity, "-n", namespace,
                               "-s", str(vdir / "version.json.sig")], stdin=f, capture_output=True, text=True)


def test_fdl_signs_ssh_keygen_verifies(signed_repo):
    repo, key, allowed = signed_repo
    head = repo.head()
    fdl("sign", repo.root, "main", "--key", key)
    vdir = repo.root / "versions" / head
    p = ssh_verify(allowed, vdir)
    assert p.returncode == 0 and 'Good "fdl" signature for ann@example.org' in p.stdout + p.stderr
    assert ssh_verify(allowed, vdir, namespace="git").returncode != 0
    p = fdl("sign", repo.root, head, "--key", key, check=False)
    assert p.returncode == 9 and "never replaced" in p.stderr


def test_ssh_keygen_signs_fdl_verifies(signed_repo):
    repo, key, allowed = signed_repo
    first = repo.version(repo.head())["parents"][0]
    for v in (repo.head(), first):
        subprocess.run(["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "fdl",
                        str(repo.root / "versions" / v / "version.json")], check=True, capture_output=True)
    p = fdl("verify", repo.root, "--signatures", "--allowed-signers", allowed, "--json")
    rep = json.loads(p.stdout)
    assert rep["ok"] and sorted(s["id"] for s in rep["signatures"]) == sorted([repo.head(), first])
    assert {s["signer"] for s in rep["signatures"]} == {"ann@example.org"}


def test_changed_version_json_fails(signed_repo):
    repo, key, allowed = signed_repo
    head = repo.head()
    fdl("sign", repo.root, head, "--key", key)
    vj = repo.root / "versions" / head / "version.json"
    vj.write_bytes(vj.read_bytes().replace(b'"message": "two"', b'"message": "tw0"'))
    p = fdl("verify", repo.root, "--signatures", "--allowed-signers", allowed, check=False)
    assert p.returncode == 5 and "does not match version.json" in p.stdout
    assert ssh_verify(allowed, repo.root / "versions" / head).returncode != 0  # stock OpenSSH agrees


def test_unknown_signer_wrong_namespace_unsigned(signed_repo, tmp_path):
    repo, key, allowed = signed_repo
    head = repo.head()
    first = repo.version(head)["parents"][0]
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    fdl("sign", repo.root, head, "--key", other)
    subprocess.run(["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "git",
                    str(repo.root / "versions" / first / "version.json")], check=True, capture_output=True)
    rep = json.loads(fdl("verify", repo.root, "--signatures", "--allowed-signers", allowed, "--json",
                         check=False).stdout)
    msgs = " ".join(p["problem"] for p in rep["problems"])
    assert "not in" in msgs and "namespace 'git'" in msgs
    (repo.root / "versions" / first / "version.json.sig").unlink()
    (repo.root / "versions" / head / "version.json.sig").unlink()
    rep = json.loads(fdl("verify", repo.root, "--signatures", "--allowed-signers", allowed, "--json",
                         check=False).stdout)
    assert [p["where"] for p in rep["problems"] if "not signed" in p["problem"]] == \
        [f"versions/{head}/version.json"]  # the tip main names
    assert [w["where"] for w in rep["warnings"] if "no signature" in w["warning"]] == \
        [f"versions/{first}/version.json"]  # an older version: a note
    # an encrypted key is refused with the reason
    enc = tmp_path / "enc"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(enc)], check=True)
    p = fdl("sign", repo.root, first, "--key", enc, check=False)
    assert p.returncode == 5 and "passphrase" in p.stderr
    assert fdl("verify", repo.root, "--signatures", check=False).returncode == 2


def test_readme_flow_signing_each_tip(signed_repo, tmp_path):
    """README's sign flow (issue 62: it exited 5): sign the tip, verify with
    --signatures; the older, unsigned version is a warning. A new commit's
    tip is unsigned until signed (exit 5), a tag's version too."""
    repo, key, allowed = signed_repo
    first = repo.version(repo.head())["parents"][0]
    sigs = ["--signatures", "--allowed-signers", allowed]
    fdl("sign", repo.root, "main", "--key", key)
    p = fdl("verify", repo.root, *sigs)
    assert p.returncode == 0 and first in p.stdout, p.stdout
    rep = json.loads(fdl("verify", repo.root, *sigs, "--json").stdout)
    assert rep["ok"] and [w["where"] for w in rep["warnings"]] == [f"versions/{first}/version.json"]
    fdl("tag", repo.root, "v1", first)
    p = fdl("verify", repo.root, *sigs, check=False)
    assert p.returncode == 5 and "a branch or tag names it" in p.stdout
    fdl("sign", repo.root, "v1", "--key", key)
    assert fdl("verify", repo.root, *sigs).returncode == 0
    con = repo.checkout(tmp_path / "w2")
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "three")
    assert fdl("verify", repo.root, *sigs, check=False).returncode == 5
    fdl("sign", repo.root, "main", "--key", key)
    assert fdl("verify", repo.root, *sigs).returncode == 0
