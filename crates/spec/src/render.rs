//! A plan as a human reads it (`safesh spec plan`, the `plan` builtin).

use crate::plan::Plan;

/// The plan's text: each step's script, risk, intent, checks, checkpoint and
/// refusal, then the criteria, output, risk summary and hash (ends with a newline).
pub fn render(p: &Plan) -> String {
    let mut s = String::new();
    let mut line = |t: String| {
        s.push_str(&t);
        s.push('\n');
    };
    line(format!(
        "plan for {} (hash {})",
        p.spec,
        &p.hash[..12.min(p.hash.len())]
    ));
    line(format!("goal: {}", p.goal.trim()));
    if !p.params.is_empty() {
        let ps: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        line(format!("params: {}", ps.join(" ")));
    }
    for st in &p.steps {
        let label = st
            .name
            .as_deref()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        line(format!("{:>3}.{label} [{}]", st.index + 1, st.risk));
        for l in st.script.lines() {
            line(format!("       $ {l}"));
        }
        if let Some(i) = &st.intent {
            line(format!("       intent: {i}"));
        }
        if !st.verify.is_empty() {
            let v: Vec<&str> = st.verify.iter().map(|a| a.kind.as_str()).collect();
            line(format!("       verify: {}", v.join(", ")));
        }
        if st.checkpoint_before {
            line("       checkpoint before".into());
        }
        if let Some(r) = &st.refusal {
            line(format!(
                "       {}: {}",
                r["code"].as_str().unwrap_or("REFUSED"),
                r["message"].as_str().unwrap_or("")
            ));
            if let Some(sug) = r["suggestion"].as_str() {
                line(format!("       suggestion: {sug}"));
            }
        }
        for n in &st.notes {
            line(format!("       note: {n}"));
        }
    }
    if !p.success_criteria.is_empty() {
        let v: Vec<&str> = p.success_criteria.iter().map(|a| a.kind.as_str()).collect();
        line(format!("success criteria: {}", v.join(", ")));
    }
    if let Some(o) = &p.output {
        line(format!("output: {}", o.path));
    }
    line(format!("risk: {}", p.risk_summary));
    line(format!("hash: {}", p.hash));
    line(
        if p.refused {
            "=> refused: a step would not run; fix the spec (nothing ran)"
        } else {
            "=> planned (nothing ran)"
        }
        .into(),
    );
    s
}
