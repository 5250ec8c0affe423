//! The bench's message accounting: sent tags against received tags (duplicates, losses,
//! messages nobody sent).

/// Compares sent and received tags: duplicates, losses (when the queue was drained empty)
/// and messages nobody sent.
pub fn verify(sent: &[u64], received: &[u64], complete: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = sent.to_vec();
    s.sort_unstable();
    let mut r = received.to_vec();
    r.sort_unstable();
    let dups: Vec<u64> = r
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    if !dups.is_empty() {
        out.push(format!(
            "{} duplicate deliveries within the visibility timeout (first tags: {:x?})",
            dups.len(),
            &dups[..dups.len().min(5)]
        ));
    }
    r.dedup();
    let s_dups = s.windows(2).filter(|w| w[0] == w[1]).count();
    if s_dups > 0 {
        out.push(format!("bench bug: {s_dups} tags sent twice"));
    }
    let (mut lost, mut extra) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < s.len() || j < r.len() {
        match (s.get(i), r.get(j)) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a < b => {
                lost.push(*a);
                i += 1;
            }
            (Some(_), Some(b)) => {
                extra.push(*b);
                j += 1;
            }
            (Some(a), None) => {
                lost.push(*a);
                i += 1;
            }
            (None, Some(b)) => {
                extra.push(*b);
                j += 1;
            }
            (None, None) => break,
        }
    }
    if complete && !lost.is_empty() {
        out.push(format!(
            "{} acknowledged messages lost (first tags: {:x?})",
            lost.len(),
            &lost[..lost.len().min(5)]
        ));
    }
    if !extra.is_empty() {
        out.push(format!(
            "{} messages received that no acknowledged send produced (first tags: {:x?})",
            extra.len(),
            &extra[..extra.len().min(5)]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::verify;

    #[test]
    fn verify_finds_losses_duplicates_and_extras() {
        assert!(verify(&[1, 2, 3], &[3, 1, 2], true).is_empty());
        assert_eq!(verify(&[1, 2, 3], &[1, 2], true).len(), 1);
        assert!(verify(&[1, 2, 3], &[1, 2], false).is_empty());
        assert_eq!(verify(&[1, 2], &[1, 2, 2], true).len(), 1);
        assert_eq!(verify(&[1, 2], &[1, 2, 9], true).len(), 1);
    }
}
