//! Why a language server or a debug adapter cannot serve a file here, in
//! words: which half of the intersection rule failed (no root marker, or
//! the program in none of the places tried, and how to get it), and why
//! no server answers for a file at all.

use tether_actors::locate::{Fetch, Unusable};
use tether_actors::lsp::supervisor::Unavailable;

/// Most tried locations a "not found" reason lists.
const MAX_TRIED_SHOWN: usize = 6;

/// `id: reason`, with the places tried: for one file, and for `status`.
pub(crate) fn sentence(u: &Unusable) -> String {
    format!("{}: {}", u.id(), reason(u, true))
}

/// `id: reason` without the places tried: for answers that list several
/// languages, where `status` gives the full one.
pub(crate) fn brief(u: &Unusable) -> String {
    format!("{}: {}", u.id(), reason(u, false))
}

/// The reason alone, with or without the places tried.
pub(crate) fn reason(u: &Unusable, with_tried: bool) -> String {
    match u {
        Unusable::NoRoot { markers, file, .. } => format!(
            "no {} in the directory of {file} or above it (up to the working directory)",
            markers.join(", ")
        ),
        Unusable::NoBinary { id, commands, tried, install } => {
            let mut text = format!("`{}` not found on PATH", commands.join("`, `"));
            if with_tried && !tried.is_empty() {
                let shown: Vec<String> =
                    tried.iter().take(MAX_TRIED_SHOWN).map(|p| p.display().to_string()).collect();
                text.push_str(&format!("; tried: {}", shown.join(", ")));
                let more = tried.len().saturating_sub(MAX_TRIED_SHOWN);
                if more > 0 {
                    text.push_str(&format!(" and {more} more"));
                }
            }
            match install {
                Some(Fetch::Tether) => text.push_str(&format!("; install it with `tether install {id}`")),
                Some(Fetch::Manual(how)) => text.push_str(&format!("; to install it: {how}")),
                None => {}
            }
            text
        }
    }
}

/// Why no server answers for a file.
pub(crate) fn unavailable(e: &Unavailable) -> String {
    match e {
        Unavailable::NoLanguage(ext) => format!("no language server handles `{ext}` files"),
        Unavailable::NotConfigured(language) => {
            format!("no language server is configured for {language}; add one to tether.toml")
        }
        Unavailable::NotUsable { language, file, reasons } => {
            let reasons: Vec<String> = reasons.iter().map(sentence).collect();
            format!("no {language} server is usable for {file}: {}", reasons.join("; "))
        }
        Unavailable::BadConfig(why) => why.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_missing_binary_names_where_it_was_looked_for_and_how_to_get_it() {
        let tried: Vec<PathBuf> = (0..8).map(|i| PathBuf::from(format!("/p{i}/intelephense"))).collect();
        let php = Unusable::NoBinary {
            id: "intelephense".into(),
            commands: vec!["intelephense".into()],
            tried,
            install: Some(Fetch::Tether),
        };
        assert_eq!(
            sentence(&php),
            "intelephense: `intelephense` not found on PATH; tried: /p0/intelephense, /p1/intelephense, /p2/intelephense, /p3/intelephense, /p4/intelephense, /p5/intelephense and 2 more; install it with `tether install intelephense`"
        );
        assert_eq!(
            brief(&php),
            "intelephense: `intelephense` not found on PATH; install it with `tether install intelephense`"
        );
        let ruby = Unusable::NoBinary {
            id: "ruby-lsp".into(),
            commands: vec!["ruby-lsp".into()],
            tried: vec![PathBuf::from("/a/ruby-lsp")],
            install: Some(Fetch::Manual("gem install ruby-lsp (RubyGems)".into())),
        };
        assert_eq!(
            brief(&ruby),
            "ruby-lsp: `ruby-lsp` not found on PATH; to install it: gem install ruby-lsp (RubyGems)"
        );
        let dart = Unusable::NoRoot {
            id: "dart".into(),
            markers: vec!["pubspec.yaml".into()],
            file: "lib/main.dart".into(),
        };
        assert_eq!(
            sentence(&dart),
            "dart: no pubspec.yaml in the directory of lib/main.dart or above it (up to the working directory)"
        );
    }
}
