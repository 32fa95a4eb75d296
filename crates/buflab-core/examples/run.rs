//! Runs a scenario file and prints its summary as JSON (a developer tool; users have the
//! `buflab` command). `cargo run --release -p buflab-core --example run -- FILE.toml`

fn main() {
    let path = std::env::args().nth(1).expect("usage: run FILE.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value: serde_json::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let scenario = buflab_core::scenario::Scenario::from_value(&value).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let net = buflab_core::simulate(&scenario);
    let mut fr = 0;
    for f in &net.sim.flows {
        if let buflab_core::endpoint::Endpoints::Tcp(buflab_core::tcp::flow::TcpFlow { sender, .. }) =
            &f.endpoints
        {
            fr += sender.window_stats.fast_retransmits;
        }
    }
    let mut net = net;
    let r = buflab_core::result::collect(&scenario, &mut net);
    let mut m = r.summary.to_json();
    m.insert("fast_retransmits".into(), fr.into());
    println!("{}", serde_json::to_string_pretty(&m).unwrap());
}
