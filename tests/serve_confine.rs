//! `tandem serve` keeps to its `--folder`: every path a request, a run
//! configuration or its model names stays in it (and what a run writes in
//! its `results/`), through symbolic links of every kind (leading inside,
//! out, to nothing, in a loop), for every file operation of the API and
//! for starting a run; what is refused is refused before anything outside
//! is looked at, so a refusal reads the same whether the outside path
//! exists or not, and no answer shows the server's absolute paths.

#[path = "support/server.rs"]
mod server;

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use serde_json::{json, Value};
use server::{root, Server};

/// A served folder with a model, beside a folder outside it holding a
/// model, a DBC and a file, and the server on it; removed when dropped.
struct Setup {
    base: PathBuf,
    folder: PathBuf,
    outside: PathBuf,
    server: Server,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let base = std::env::temp_dir().join(format!("tandem-confine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (folder, outside) = (base.join("folder"), base.join("outside"));
        for dir in [folder.join("models"), folder.join("config"), outside.clone()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let model = std::fs::read_to_string(root().join("models/examples/cruise_control.json")).unwrap();
        std::fs::write(folder.join("models/cruise.json"), &model).unwrap();
        std::fs::write(outside.join("m.json"), &model).unwrap();
        std::fs::copy(root().join("config/examples/ev.dbc"), outside.join("ev.dbc")).unwrap();
        std::fs::write(outside.join("secret.json"), "{\"secret\": 1}").unwrap();
        let server = Server::in_folder(&folder);
        Setup {
            base,
            folder,
            outside,
            server,
        }
    }

    /// Writes configuration `config/NAME.toml`: the cruise control model
    /// (or `model`), a tenth of a second, and `rest`.
    fn config(&self, name: &str, model: &str, rest: &str) -> String {
        let text = format!("model = \"{model}\"\nframe = \"10ms\"\nduration = \"0.1s\"\n{rest}");
        std::fs::write(self.folder.join(format!("config/{name}.toml")), text).unwrap();
        format!("config/{name}.toml")
    }

    /// Starts a run of `config` on the virtual clock: status and answer.
    fn start(&self, config: &str) -> (u16, Value) {
        let body = json!({"config": config, "virtual_clock": true}).to_string();
        let (status, text) = self.server.post("/api/runs", &body);
        let answer = serde_json::from_str(&text).unwrap_or_else(|_| panic!("a JSON answer: {text}"));
        if status != 201 {
            self.assert_no_absolute_path(&text);
        }
        (status, answer)
    }

    /// No answer shows the served folder's absolute path.
    fn assert_no_absolute_path(&self, text: &str) {
        let folder = self.folder.to_str().unwrap();
        assert!(!text.contains(folder), "an answer shows the server's paths: {text}");
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The error of an answer, with `name` replaced by `NAME`.
fn error_naming(answer: &Value, name: &str) -> String {
    answer["error"].as_str().expect("an error").replace(name, "NAME")
}

#[test]
fn a_configuration_through_the_server_names_no_file_outside_the_folder() {
    let s = Setup::new("config");
    let outside = s.outside.to_str().unwrap().to_string();
    let model = "../models/cruise.json";

    // What a run writes stays in results/: absolute, `..`, and bus logs.
    for (name, rest, key) in [
        ("abs", format!("[record]\nfile = \"{outside}/x.csv\""), "record.file"),
        ("up", "[record]\nfile = \"../../x.csv\"".to_string(), "record.file"),
        (
            "up-in",
            "[record]\nfile = \"../models/x.csv\"".to_string(),
            "record.file",
        ),
        (
            "log",
            "[record]\nfile = \"r.csv\"\nbus_log = \"../bus.log\"".to_string(),
            "record.bus_log",
        ),
    ] {
        let (status, answer) = s.start(&s.config(name, model, &rest));
        assert_eq!(status, 422, "{name}: {answer}");
        assert_eq!(answer["place"]["key"], key, "{answer}");
        assert_eq!(answer["place"]["path"], format!("config/{name}.toml"));
        assert!(
            answer["error"]
                .as_str()
                .unwrap()
                .contains("writes only into the served folder's results/"),
            "{answer}"
        );
    }
    assert!(!s.outside.join("x.csv").exists() && !s.base.join("x.csv").exists());
    assert!(!s.folder.join("models/x.csv").exists() && !s.folder.join("bus.log").exists());

    // Files read: the model, a DBC, the ECU's configuration. An outside
    // path is refused alike whether it exists or not.
    let refused = |name: &str, text: &str, key: &str, target: &str| {
        let config = match key {
            "model" => s.config(name, target, ""),
            "bus[0].dbc" => s.config(
                name,
                model,
                &format!("[[bus]]\ntransport = \"virtual\"\ndbc = \"{target}\"\n{text}"),
            ),
            _ => s.config(name, model, &format!("[ecu]\nconfig = \"{target}\"\n")),
        };
        let (status, answer) = s.start(&config);
        assert_eq!(status, 422, "{key} = {target}: {answer}");
        assert_eq!(answer["place"]["key"], key, "{answer}");
        assert!(answer["place"]["line"].is_u64(), "at its line: {answer}");
        assert!(
            answer["error"].as_str().unwrap().contains("outside the served folder"),
            "{answer}"
        );
        error_naming(&answer, target)
    };
    let receive = "[[bus.receive]]\nmessage = \"ECU_Command\"\nsignals = { TorqueRequest = \"pedal\" }";
    for (key, there, missing) in [
        ("model", format!("{outside}/m.json"), format!("{outside}/gone.json")),
        ("model", "../../outside/m.json".into(), "../../outside/gone.json".into()),
        ("bus[0].dbc", format!("{outside}/ev.dbc"), format!("{outside}/gone.dbc")),
        ("ecu.config", "/etc/passwd".into(), "/etc/no-such-file".into()),
    ] {
        assert_eq!(
            refused("probe", receive, key, &there),
            refused("probe", receive, key, &missing),
            "the same refusal whether {there} exists or not"
        );
    }

    // Devices: serial ports under /dev only, a file is none.
    let serial = |device: &str| {
        let rest = format!("[[serial]]\ndevice = \"{device}\"\nreceive = {{ spd = \"pedal\" }}");
        let (status, answer) = s.start(&s.config("serial", model, &rest));
        assert_eq!(status, 422, "{answer}");
        assert_eq!(answer["place"]["key"], "serial[0].device");
        error_naming(&answer, device)
    };
    let not_a_device = serial(&format!("{outside}/secret.json"));
    assert!(
        not_a_device.contains("is not a serial device this server was started to allow"),
        "{not_a_device}"
    );
    assert_eq!(not_a_device, serial(&format!("{outside}/gone")));
    assert_eq!(not_a_device, serial("/dev/../etc/passwd"));

    // A configuration inside, naming files inside, runs and records into
    // results/.
    let (status, answer) = s.start(&s.config("good", model, "[record]\nfile = \"runs/good.csv\""));
    assert_eq!(status, 201, "{answer}");
    let id = answer["id"].as_str().unwrap();
    let ended = wait_ended(&s.server, id);
    assert_eq!(ended["state"], "done", "{ended}");
    s.assert_no_absolute_path(&ended.to_string());
    assert_eq!(ended["report"]["recording"]["file"], "results/runs/good.csv");
    let rows = std::fs::read_to_string(s.folder.join("results/runs/good.csv")).unwrap();
    assert_eq!(rows.lines().count(), 11, "a header and 10 frames");

    // A mistake inside the configuration is shown relative to the folder.
    let (status, answer) = s.start(&s.config("typo", model, "[record]\nfile = \"r.csv\"\ndecimation = 0"));
    assert_eq!(status, 422);
    assert!(
        answer["error"].as_str().unwrap().starts_with("config/typo.toml:6:"),
        "{answer}"
    );
    assert_eq!(answer["place"]["key"], "record.decimation");
    let (status, answer) = s.start(&s.config("nomodel", "../models/gone.json", ""));
    assert_eq!(status, 422);
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("models/gone.json\": no such file"),
        "{answer}"
    );
}

/// Waits until run `id` has ended; its status.
fn wait_ended(server: &Server, id: &str) -> Value {
    for _ in 0..600 {
        let status = server.json(&format!("/api/runs/{id}"));
        if status["state"] != "running" {
            return status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("run {id} still runs after 30 s");
}

/// Links of every kind in the served folder: `in.json` to a model inside,
/// `out.json` to a file outside, `dangling-out.json` to nothing outside,
/// `dangling-in.json` to nothing inside, `loop.json` to itself through
/// `loop2.json`; `dir-in` to a folder inside and `dir-out` to the folder
/// outside.
fn links(s: &Setup) {
    let f = &s.folder;
    symlink("models/cruise.json", f.join("in.json")).unwrap();
    symlink(s.outside.join("secret.json"), f.join("out.json")).unwrap();
    symlink(s.outside.join("p.json"), f.join("dangling-out.json")).unwrap();
    symlink("models/new.json", f.join("dangling-in.json")).unwrap();
    symlink("loop2.json", f.join("loop.json")).unwrap();
    symlink("loop.json", f.join("loop2.json")).unwrap();
    symlink("models", f.join("dir-in")).unwrap();
    symlink(&s.outside, f.join("dir-out")).unwrap();
}

#[test]
fn every_file_operation_follows_links_inside_and_refuses_links_out_dangling_or_looping() {
    let s = Setup::new("links");
    links(&s);
    let model = std::fs::read_to_string(s.folder.join("models/cruise.json")).unwrap();
    let server = &s.server;
    let get = |path: &str| server.get(&format!("/api/files/{path}"));
    let put =
        |path: &str, body: &str| server.request("PUT", &format!("/api/files/{path}"), Some(body.as_bytes()), None);
    let answer = |(status, text): (u16, String)| {
        s.assert_no_absolute_path(&text);
        (status, serde_json::from_str::<Value>(&text).unwrap_or(Value::Null))
    };

    // Reading.
    assert_eq!(get("in.json"), (200, model.clone()));
    assert_eq!(get("dir-in/cruise.json"), (200, model.clone()));
    let (status, out) = answer(get("out.json"));
    assert_eq!(status, 403, "{out}");
    assert!(
        !out.to_string().contains("secret"),
        "nothing of the file outside: {out}"
    );
    let (status, dangling_out) = answer(get("dangling-out.json"));
    assert_eq!(status, 403);
    assert_eq!(
        error_naming(&out, "out.json"),
        error_naming(&dangling_out, "dangling-out.json"),
        "the same refusal whether the target outside exists or not"
    );
    assert_eq!(answer(get("dir-out/secret.json")).0, 403);
    assert_eq!(answer(get("dangling-in.json")).0, 404);
    let (status, looping) = answer(get("loop.json"));
    assert_eq!(status, 403);
    assert!(
        looping["error"].as_str().unwrap().contains("symbolic links loop"),
        "{looping}"
    );

    // Listing: links out, dangling or looping are left out.
    let listing = server.json("/api/files?dir=");
    let names: Vec<&str> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["config", "dir-in", "models", "in.json"]);
    assert_eq!(listing["entries"][3]["size"], model.len());
    assert_eq!(
        server.json("/api/files?dir=dir-in")["entries"][0]["name"],
        "cruise.json"
    );
    assert_eq!(answer(server.get("/api/files?dir=dir-out")).0, 403);

    // Writing: through a link inside to its target; never out.
    assert_eq!(put("in.json", "{\"blocks\": []}").0, 204);
    assert_eq!(
        std::fs::read_to_string(s.folder.join("models/cruise.json")).unwrap(),
        "{\"blocks\": []}"
    );
    std::fs::write(s.folder.join("models/cruise.json"), &model).unwrap();
    for (path, status) in [
        ("out.json", 403),
        ("dangling-out.json", 403),
        ("dir-out/new.json", 403),
        ("loop.json", 403),
    ] {
        let (got, body) = answer(put(path, "{}"));
        assert_eq!(got, status, "PUT {path}: {body}");
    }
    assert_eq!(
        std::fs::read_to_string(s.outside.join("secret.json")).unwrap(),
        "{\"secret\": 1}"
    );
    assert!(
        !s.outside.join("p.json").exists(),
        "nothing created through a dangling link out"
    );
    assert!(!s.outside.join("new.json").exists());
    assert_eq!(put("dangling-in.json", "{}").0, 204);
    assert_eq!(std::fs::read_to_string(s.folder.join("models/new.json")).unwrap(), "{}");
}

#[test]
fn a_run_is_started_and_writes_through_links_inside_only() {
    let s = Setup::new("run-links");
    links(&s);
    let f = &s.folder;
    let good = s.config("good", "../in.json", "[record]\nfile = \"r.csv\"");
    symlink("good.toml", f.join("config/in.toml")).unwrap();
    symlink(s.outside.join("x.toml"), f.join("config/out.toml")).unwrap();
    std::fs::write(s.outside.join("x.toml"), std::fs::read(f.join(&good)).unwrap()).unwrap();
    symlink("loop.toml", f.join("config/loop.toml")).unwrap();
    symlink("gone.toml", f.join("config/dangling.toml")).unwrap();

    // The configuration itself, by a link of each kind.
    let (status, answer) = s.start("config/in.toml");
    assert_eq!(status, 201, "{answer}");
    wait_ended(&s.server, answer["id"].as_str().unwrap());
    assert!(f.join("results/r.csv").is_file());
    for (config, status) in [
        ("config/out.toml", 403),
        ("config/loop.toml", 403),
        ("config/dangling.toml", 422),
    ] {
        assert_eq!(s.start(config).0, status, "{config}");
    }

    // The model by a link out, and through a folder link out.
    for model in ["../out.json", "../dir-out/m.json"] {
        let (status, answer) = s.start(&s.config("model", model, ""));
        assert_eq!(status, 422, "{model}: {answer}");
        assert_eq!(answer["place"]["key"], "model");
    }

    // The recording through links in results/: out, dangling out (the
    // file would be created outside), looping; results/ itself a link out.
    std::fs::create_dir(f.join("results/links")).unwrap();
    symlink(s.outside.join("secret.json"), f.join("results/links/out.csv")).unwrap();
    symlink(s.outside.join("d.csv"), f.join("results/links/dangling.csv")).unwrap();
    symlink("loop.csv", f.join("results/links/loop.csv")).unwrap();
    symlink(&s.outside, f.join("results/links/dir")).unwrap();
    for file in ["out.csv", "dangling.csv", "loop.csv", "dir/r.csv"] {
        let rest = format!("[record]\nfile = \"links/{file}\"");
        let (status, answer) = s.start(&s.config("record", "../models/cruise.json", &rest));
        assert_eq!(status, 422, "{file}: {answer}");
        assert_eq!(answer["place"]["key"], "record.file");
    }
    std::fs::remove_dir_all(f.join("results")).unwrap();
    symlink(&s.outside, f.join("results")).unwrap();
    let (status, answer) = s.start(&s.config("record", "../models/cruise.json", "[record]\nfile = \"r.csv\""));
    assert_eq!(status, 422, "{answer}");
    assert!(!s.outside.join("d.csv").exists() && !s.outside.join("r.csv").exists());
    assert_eq!(
        std::fs::read_to_string(s.outside.join("secret.json")).unwrap(),
        "{\"secret\": 1}"
    );
}
