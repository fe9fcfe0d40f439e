//! Authentication kinds against servers configured for each.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::TestServer;
use natsio::auth::{sign_with_seed, AuthFields, Authenticator, Credentials};
use natsio::{Client, ConnState, ErrorKind, Options};

fn opts(url: String) -> Options {
    Options {
        servers: vec![url],
        allow_reconnect: false,
        ..Options::default()
    }
}

fn connects(o: Options) -> Result<(), ErrorKind> {
    let c = Client::connect(o).map_err(|e| e.kind())?;
    c.flush(Some(Duration::from_secs(2))).map_err(|e| e.kind())
}

#[test]
fn user_password_in_options_and_url() {
    let s = TestServer::with_config("authorization { user: alice, password: s3cret }");
    let mut o = opts(s.url());
    o.user = Some("alice".into());
    o.password = Some("s3cret".into());
    assert_eq!(connects(o), Ok(()));
    let url = s.url().replace("nats://", "nats://alice:s3cret@");
    assert_eq!(connects(opts(url)), Ok(()));
    let mut o = opts(s.url());
    o.user = Some("alice".into());
    o.password = Some("wrong".into());
    assert_eq!(connects(o), Err(ErrorKind::AuthorizationViolation));
    assert_eq!(
        connects(opts(s.url())),
        Err(ErrorKind::AuthorizationViolation)
    );
}

#[test]
fn token_in_options_and_url() {
    let s = TestServer::with_config("authorization { token: t0ken }");
    let mut o = opts(s.url());
    o.token = Some("t0ken".into());
    assert_eq!(connects(o), Ok(()));
    assert_eq!(
        connects(opts(s.url().replace("nats://", "nats://t0ken@"))),
        Ok(())
    );
    let mut o = opts(s.url());
    o.token = Some("nope".into());
    assert_eq!(connects(o), Err(ErrorKind::AuthorizationViolation));
}

#[test]
fn nkey_seed_string_file_and_wrong_key() {
    let user = nkeys::KeyPair::new_user();
    let seed = user.seed().unwrap();
    let s = TestServer::with_config(&format!(
        "authorization {{ users = [ {{ nkey: {} }} ] }}",
        user.public_key()
    ));
    let mut o = opts(s.url());
    o.credentials = Some(Credentials::NKeySeed(seed.clone()));
    assert_eq!(connects(o), Ok(()));
    let file = std::env::temp_dir().join(format!("natsio-nkey-{}.nk", std::process::id()));
    std::fs::write(&file, format!("{seed}\n")).unwrap();
    let mut o = opts(s.url());
    o.credentials = Some(Credentials::NKeyFile(file.clone()));
    assert_eq!(connects(o), Ok(()));
    std::fs::remove_file(&file).unwrap();
    let other = nkeys::KeyPair::new_user().seed().unwrap();
    let mut o = opts(s.url());
    o.credentials = Some(Credentials::NKeySeed(other));
    assert_eq!(connects(o), Err(ErrorKind::AuthorizationViolation));
}

/// An application authenticator presenting an NKey (no JWT).
struct SeedAuthenticator(String);

impl Authenticator for SeedAuthenticator {
    fn authenticate(&self, nonce: &[u8]) -> natsio::Result<AuthFields> {
        assert!(
            natsio::runtime::ensure_may_block().is_ok(),
            "authenticator ran on a runtime thread"
        );
        let (nkey, sig) = sign_with_seed(&self.0, nonce)?;
        Ok(AuthFields {
            jwt: None,
            nkey: Some(nkey),
            sig: Some(sig),
            ..AuthFields::default()
        })
    }
}

#[test]
fn custom_authenticator_runs_off_the_runtime() {
    let user = nkeys::KeyPair::new_user();
    let s = TestServer::with_config(&format!(
        "authorization {{ users = [ {{ nkey: {} }} ] }}",
        user.public_key()
    ));
    let mut o = opts(s.url());
    o.credentials = Some(Credentials::Custom(Arc::new(SeedAuthenticator(
        user.seed().unwrap(),
    ))));
    assert_eq!(connects(o), Ok(()));
}

#[test]
fn two_auth_kinds_are_a_config_error_naming_both() {
    let mut o = opts("nats://127.0.0.1:1".into());
    o.token = Some("t".into());
    o.credentials = Some(Credentials::NKeySeed(
        nkeys::KeyPair::new_user().seed().unwrap(),
    ));
    let e = Client::connect(o).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(
        e.detail().contains("token") && e.detail().contains("nkey seed"),
        "{}",
        e.detail()
    );
}

fn reconnecting_client(url: String, ignore_auth_error_abort: bool) -> Client {
    let mut o = opts(url);
    o.allow_reconnect = true;
    o.max_reconnect_attempts = -1;
    o.reconnect_time_wait = Duration::from_millis(20);
    o.reconnect_time_wait_max = Duration::from_millis(40);
    o.reconnect_jitter = Duration::ZERO;
    o.ignore_auth_error_abort = ignore_auth_error_abort;
    o.token = Some("first".into());
    Client::connect(o).unwrap()
}

#[test]
fn repeated_auth_error_on_reconnect_aborts_unless_ignored() {
    // The server comes back requiring another token: the same authorization
    // error twice in a row closes the client, instead of looping forever.
    let mut s = TestServer::with_config("authorization { token: first }");
    let aborting = reconnecting_client(s.url(), false);
    let persistent = reconnecting_client(s.url(), true);
    std::fs::write(
        s.dir().join("server.conf"),
        "authorization { token: second }\n",
    )
    .unwrap();
    s.restart();
    assert!(common::wait_until(Duration::from_secs(10), || aborting
        .status()
        == ConnState::Closed));
    // An absence: it neither gives up nor connects within 300 ms.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(persistent.status(), ConnState::Reconnecting);
}

fn auth_fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/auth")
        .join(name)
}

#[test]
fn credentials_file_in_operator_mode() {
    let conf = std::fs::read_to_string(auth_fixture("operator.conf")).unwrap();
    let s = TestServer::with_config(&conf);
    let mut o = opts(s.url());
    o.credentials = Some(Credentials::CredsFile(auth_fixture("user.creds")));
    assert_eq!(connects(o), Ok(()));
    // A user of an account the server does not know, and a revoked user.
    for bad in ["stranger.creds", "revoked.creds"] {
        let mut o = opts(s.url());
        o.credentials = Some(Credentials::CredsFile(auth_fixture(bad)));
        assert_eq!(connects(o), Err(ErrorKind::AuthorizationViolation), "{bad}");
    }
}
