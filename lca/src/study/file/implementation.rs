//! `[[implementation]]`: each implementation's name, command and Slurm resources. Every
//! factor must reach the command, and every placeholder must be known.

use toml::Spanned;

use super::check::{Source, is_name, timeout};
use super::raw::RawImplementation;
use super::template::Template;
use super::{BUILTINS, Implementation, RESOURCES, StudyError, excerpt};

/// Every implementation, in the file's order (at least one, each name once); `timeout_s` is
/// the study's, for those that give none.
pub(super) fn implementations(
    src: &Source,
    raw: &[Spanned<RawImplementation>],
    names: &[&str],
    timeout_s: f64,
) -> Result<Vec<Implementation>, StudyError> {
    if raw.is_empty() {
        return Err(src.error(
            src.text.len(),
            "no [[implementation]]: give at least one, with a name and a command".into(),
        ));
    }
    let mut implementations: Vec<Implementation> = Vec::new();
    for imp in raw {
        let imp = imp.get_ref();
        let name = imp.name.get_ref().trim().to_string();
        if !is_name(&name) {
            return Err(src.at(
                &imp.name,
                format!(
                    "implementation name '{}': expected letters, digits, '-', '_' or '.'",
                    excerpt(&name)
                ),
            ));
        }
        if implementations.iter().any(|i| i.name == name) {
            return Err(src.at(&imp.name, format!("implementation '{name}' is given twice")));
        }
        let command = command(src, imp, &name, names)?;
        let timeout_s = imp
            .timeout_s
            .as_ref()
            .map(|t| timeout(src, t))
            .transpose()?
            .unwrap_or(timeout_s);
        let resources = resources(src, imp, &name, names)?;
        implementations.push(Implementation {
            name,
            command,
            timeout_s,
            resources,
        });
    }
    Ok(implementations)
}

/// The command of `imp` (named `name`): not empty, its placeholders the factors and
/// [`BUILTINS`], every factor used.
fn command(
    src: &Source,
    imp: &RawImplementation,
    name: &str,
    names: &[&str],
) -> Result<Vec<Template>, StudyError> {
    if imp.command.get_ref().is_empty() {
        return Err(src.at(
            &imp.command,
            format!("implementation '{name}': the command is empty"),
        ));
    }
    let mut command = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for arg in imp.command.get_ref() {
        let template = Template::parse(arg.get_ref());
        for p in template.placeholders() {
            if !names.contains(&p) && !BUILTINS.contains(&p) {
                let mut known: Vec<String> = names.iter().map(|n| format!("{{{n}}}")).collect();
                known.extend(BUILTINS.iter().map(|b| format!("{{{b}}}")));
                return Err(src.at(
                    arg,
                    format!(
                        "unknown placeholder {{{p}}} in the command of '{name}' (known: {})",
                        known.join(", ")
                    ),
                ));
            }
            used.push(p.to_string());
        }
        command.push(template);
    }
    if let Some(missing) = names.iter().find(|n| !used.iter().any(|u| u == *n)) {
        return Err(src.at(
            &imp.command,
            format!(
                "the command of '{name}' does not use {{{missing}}}: every factor must reach the program"
            ),
        ));
    }
    Ok(command)
}

/// The `sbatch` options `imp` sets per run ([`RESOURCES`]), as templates over the factors,
/// `{impl}` and `{replicate}`.
fn resources(
    src: &Source,
    imp: &RawImplementation,
    name: &str,
    names: &[&str],
) -> Result<Vec<(&'static str, Template)>, StudyError> {
    let mut resources = Vec::new();
    let given = [&imp.ntasks, &imp.cpus_per_task, &imp.nodes, &imp.mem];
    for ((key, option), value) in RESOURCES.iter().zip(given) {
        let Some(value) = value else { continue };
        let text = match value.get_ref() {
            toml::Value::Integer(n) if *n > 0 => n.to_string(),
            toml::Value::String(s) => s.clone(),
            other => {
                return Err(src.at(
                    value,
                    format!(
                        "{key} = {}: expected a positive integer or a string with \
                         placeholders, like \"{{p}}\"",
                        excerpt(&other.to_string())
                    ),
                ));
            }
        };
        let template = Template::parse(&text);
        if let Some(p) = template
            .placeholders()
            .find(|p| !names.contains(p) && !matches!(*p, "impl" | "replicate"))
        {
            return Err(src.at(
                value,
                format!(
                    "unknown placeholder {{{p}}} in {key} of '{name}' (known: the \
                     factors, {{impl}}, {{replicate}})"
                ),
            ));
        }
        resources.push((*option, template));
    }
    Ok(resources)
}
