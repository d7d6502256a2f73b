//! GTID sets: text and binary forms round-trip, set algebra as MySQL's
//! GTID_SUBSET / GTID_SUBTRACT, malformed text is 1772, and gtid_mode
//! moves one step at a time.

use super::*;

const A: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const B: &str = "4d22fa47-71ca-11e1-9e33-c80aa9429562";

#[test]
fn text_form_merges_sorts_and_round_trips() {
    let s = GtidSet::parse(&format!("{B}:5, {A}:3-4:1-2:7 ,{A}:8")).expect("parse");
    assert_eq!(s.to_text(), format!("{A}:1-4:7-8,\n{B}:5"));
    assert_eq!(GtidSet::parse(&s.to_text()).expect("again"), s);
    assert_eq!(s.count(), 7);
    assert_eq!(GtidSet::decode(&s.encode()).expect("binary"), s);
    assert_eq!(GtidSet::parse("").expect("empty"), GtidSet::default());
    let upper = GtidSet::parse(&format!("{}:1", A.to_uppercase())).expect("upper");
    assert!(upper.contains(&parse_sid(A).expect("sid"), 1));
    for bad in [
        "x:1",
        A,
        &format!("{A}:0"),
        &format!("{A}:5-3"),
        &format!("{A}:1,"),
        &format!("{A}:a"),
    ] {
        let e = GtidSet::parse(bad).expect_err(bad);
        assert_eq!(e.code, 1772, "{bad}");
    }
    assert!(GtidSet::decode(&[1, 0, 0]).is_err(), "truncated binary");
}

#[test]
fn subset_and_subtract() {
    let all = GtidSet::parse(&format!("{A}:1-10,{B}:1-3")).expect("p");
    let part = GtidSet::parse(&format!("{A}:2-4:9")).expect("p");
    assert!(part.is_subset_of(&all));
    assert!(!all.is_subset_of(&part));
    assert_eq!(
        all.subtract(&part).to_text(),
        format!("{A}:1:5-8:10,\n{B}:1-3")
    );
    assert!(GtidSet::default().is_subset_of(&part));
}

#[test]
fn gtid_mode_steps_and_needs_enforce_for_on() {
    let sid = parse_sid(A).expect("sid");
    let st = GtidState::new(
        sid,
        GtidMode::Off,
        "OFF",
        GtidSet::default(),
        GtidSet::default(),
    );
    assert_eq!(st.set_mode(GtidMode::On).expect_err("jump").code, 1788);
    st.set_mode(GtidMode::OffPermissive).expect("step");
    assert_eq!(
        st.assign(),
        None,
        "OFF_PERMISSIVE logs anonymous transactions"
    );
    st.set_mode(GtidMode::OnPermissive).expect("step");
    assert_eq!(st.assign(), Some(1));
    assert_eq!(st.set_mode(GtidMode::On).expect_err("enforce").code, 1779);
    st.set_enforce("ON").expect("enforce");
    st.set_mode(GtidMode::On).expect("on");
    assert_eq!(st.set_enforce("OFF").expect_err("kept").code, 1779);
    assert_eq!(st.assign(), Some(2));
    st.executed(1);
    st.executed(2);
    assert_eq!(st.executed_set().to_text(), format!("{A}:1-2"));
    let want = GtidSet::parse(&format!("{A}:1-3")).expect("p");
    assert!(!st.wait_executed(&want, Some(std::time::Duration::from_millis(20)), || false));
    st.executed(3);
    assert!(st.wait_executed(&want, Some(std::time::Duration::ZERO), || false));
}
