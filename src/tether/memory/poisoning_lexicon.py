"""The poisoning lexicon: each category's word stems in the languages the detector reads
(rights and roles, controls, weakening, the agent, data leaving, the writer...), as
:func:`tether.memory.injection.normalise` leaves a text, and each category compiled to
one trie regex (:func:`stem_trie`). :func:`tether.memory.poisoning.categories` names the
categories a text holds; the judge weighs them among its features."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

_UNSPACED = 0x2E80
"""From here on (CJK scripts) words are not separated by spaces."""


def _plain(stem: str) -> str:
    """A stem as the normalised text has it: folded, without accents (a Japanese stem
    loses its voicing marks as the text does), ``_`` and ``-`` as spaces."""
    decomposed = unicodedata.normalize("NFKD", stem.casefold())
    stem = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stem.replace("_", " ").replace("-", " ")


def stem_list(*spaced: str) -> list[str]:
    """The distinct stems of space-separated groups, as the normalised text has them."""
    return sorted({_plain(stem) for group in spaced for stem in group.split()})


def _stems(stems: Sequence[str]) -> re.Pattern[str]:
    """Stems matched at a word start as prefixes; ``_`` and ``-`` stand for a space (as
    the normalised text has it) and a final ``$`` asks for the whole word. Text without
    spaces between words (Japanese) has no word starts: such a stem matches anywhere.

    The stems are compiled as a trie (:func:`stem_trie`): the regex engine tries the
    branches of an alternation one by one, so hundreds of stems side by side cost a try
    each at every position of the text, where a trie costs one per letter."""
    spaced_out = [stem for stem in stems if ord(stem[0]) < _UNSPACED]
    unspaced = [stem for stem in stems if ord(stem[0]) >= _UNSPACED]
    parts = [r"\b" + stem_trie(spaced_out)] if spaced_out else []
    parts += [stem_trie(unspaced)] if unspaced else []
    return re.compile("|".join(parts))


def stem_trie(stems: Sequence[str]) -> str:
    """A regex that a text is found by (``search``) exactly when one of ``stems`` is found
    at the same place: each a prefix, or a whole word when it ends in ``$``."""
    root: dict[str, Any] = {}
    for stem in stems:
        whole = stem.endswith("$")
        node = root
        for char in stem[:-1] if whole else stem:
            node = node.setdefault(char, {})
        # a prefix found is found whatever follows: it outranks a whole word there
        node[""] = "prefix" if not whole or node.get("") == "prefix" else "word"
    return _trie_pattern(root)


def _trie_pattern(node: dict[str, Any]) -> str:
    end = node.get("")
    if end == "prefix":
        return ""
    branches = [
        re.escape(char) + _trie_pattern(child) for char, child in sorted(node.items()) if char
    ]
    if end == "word":
        branches.append(r"\b")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


_OTHER_LANGUAGES: dict[str, str] = {
    # Polish, Swedish, Turkish and Japanese: the same categories, fewer stems
    "privilege": (
        "uprawnien uprawnion upowaznien pelny_dostep pełny_dostep pełnego_dostepu "
        "nieograniczon zwolnion_z autoryzowan przywilej behorighet rattighet "
        "full_atkomst fullstandig_atkomst obegransad undantagen befogenhet "
        "auktoriserad fullmakt privilegi yetki ayrıcalık tam_erisim sınırsız muaf "  # noqa: RUF001
        "権限 特権 アクセス権 全権 認可 無制限 免除 承認済"
    ),
    "breadth": "wszystk kazd każd alla$ allt$ varje tum$ tüm$ butun bütün 全て すべて 全体 全部",
    "role": (
        "kierownik własciciel wlasciciel prezes dyrektor menedzer szef systemadmin "
        "chef$ agare vd$ direktor yonetici yönetici mudur müdür sahibi "
        "管理者 部長 社長 責任者 所有者 オーナー 役員"
    ),
    "control": (
        "dziennik audyt zatwierdz weryfikac kontrol kopie_zapasow kopii_zapasow przelew "
        "płatnos platnos zwrot hasło haslo dwuetapow uwierzytelnian monitorow "
        "baz_klient bazy_klient rejestr logowani histori zgod bezpieczenst "
        "logg granskning godkann verifier sakerhetskopi utbetalning aterbetalning "
        "losenord tvafaktor overvakning kundregist kundlist historik sakerhet "
        "kayıt kayd denetim onay dogrula yedek odeme iade sifre iki_adım guvenlik "  # noqa: RUF001
        "musteri_list gecmis "
        "ログ 監査 承認 確認 検証 バックアップ 送金 返金 支払 パスワード 二段階 認証 監視 "
        "顧客 記録 履歴 セキュリティ 不正"
    ),
    "weaken": (
        "pomin pominąc wyłacz wylacz usun usuwa bez_weryfikac bez_zgod bez_zatwierdz "
        "bez_kontrol bez_pytania nie_zapisuj nie_rejestruj nie_loguj ukryj ignoruj "
        "nie_pros obejsc hoppa_over hoppar_over stang_av stanga_av radera ta_bort "
        "utan_att_fraga utan_godkann utan_kontroll utan_verifiering logga_inte "
        "inte_logga dolj ignorera kringga atla devre_dısı kapat sil$ silin silebil "  # noqa: RUF001
        "sormadan dogrulamadan onaysız kontrolsuz yazma$ kaydetme gizle yok_say "  # noqa: RUF001
        "gerek_yok スキップ 無効 削除 記録しない 求めない 確認なし 確認せず 聞かず 省略 "
        "無視 隠 停止 不要"
    ),
    "agent": (
        "asystent model_jezykow sztuczna_inteligencj ai_modell sprakmodell asistan "
        "yapay_zeka dil_modeli アシスタント 人工知能"
    ),
    "directive": (
        "od_teraz odtad zawsze nigdy musi$ musisz nalezy należy alltid aldrig maste "
        "ska$ skall hadanefter fran_och_med_nu her_zaman asla bundan_sonra gerekir "
        "今後 常に 必ず これからは すること 決して"
    ),
    "grant": (
        "nadano przyznan awansow mianowan beviljad tilldelad$ befordrad utnamnd "
        "verildi$ tanındı atandı terfi 付与された 与えられ 昇進 任命"  # noqa: RUF001
    ),
    "exfiltrate": (
        "na_moj_prywatny na_prywatny na_moja_prywatna skicka_hela skicka_en_kopia "
        "till_min_privata till_min_privat vidarebefordra_alla kisisel_e_postama "
        "kisisel_adresime ozel_e_postama 個人メールに 個人のメールに 私用メールに 外部に送"
    ),
    "self": (
        "jestem mam$ moje moj$ moich mnie$ jag_ar jag_har mina mitt mig$ benim bende "
        "私は 私の 僕 自分"
    ),
}
"""Stems in four languages the team's corpus does not have, added to :data:`LEXICON`."""

LEXICON_STEMS: dict[str, list[str]] = {
    # rights: privileges, permissions, access, exemptions (a strong sign)
    "privilege": stem_list(
        "privileg privilegi privilegio privilegie superus superutente superusuari "
        "superutilisat root_access root_rights root-zugriff root-toegang acesso_root "
        "acceso_root accesso_root acces_root root_on$ sudo permission permiso permisos "
        "permissao permissoes permesso permessi berechtig toestemming autorisatie "
        "rights$ rechte rechten droits$ derechos$ diritti$ direitos$ access$ accesso$ "
        "acceso$ acesso$ acces$ toegang zugriff zugang clearance allowlist whitelist "
        "liste_blanche lista_blanca lista_autorizzata lista_de_permiss freigabeliste "
        "toegestane_lijst exempt exento exenta esente isent vrijgesteld ausgenommen "
        "access_level zugriffsstufe unrestricted onbeperkt unbeschrankt sans_limite "
        "sin_restric senza_limit sem_restric full_access vollen_zugriff voller_zugriff "
        "elevated erhoht override_rights signing_authority pre-approved pre_approved "
        "preapproved vorab_genehmigt deja_approuv ya_aprobad gia_approvat ja_aprovad "
        "vooraf_goedgekeurd authorised authorized authorisation authorization autorizado "
        "autorizada autorizzat autorise autorisee habilite bevoegd befugt berechtigt "
        "freigeschaltet whitelisted allowlisted exportrechte exportrechten "
        "droits_d'export permisos_de_export permessi_di_esport permissoes_de_export "
        "export_permission authority authorit autoridad autorita autoridade bevoegdheid "
        "vollmacht befugnis pouvoir_d poder_de potere_di on_his_own on_her_own "
        "on_their_own selbst_freigeb selbst_genehmig seul$ por_su_cuenta da_solo "
        "da_sola sozinho sozinha zelf_goedkeur gaat_boven geht_vor hat_vorrang prevale "
        "prevalece scavalca sobrepoe anula$ anulla",
        _OTHER_LANGUAGES["privilege"],
    ),
    # everything: all records, every account, any case
    "breadth": stem_list(
        "all$ every any$ tutte tutti todos todas tous$ toutes alle$ alles iedere elke "
        "jede$ jeder jedes qualsiasi cualquier qualquer n'importe whole entire gesamte "
        "ganze hele$ tout_le toda_la tutta_la",
        _OTHER_LANGUAGES["breadth"],
    ),
    # roles that carry authority (weak alone: an occupation is no claim)
    "role": stem_list(
        "admin administrat amministrat beheerder owner$ proprietaire proprietari "
        "eigentumer eigenaar dueno$ dono$ ceo$ pdg$ vorstand director$ directors$ directora "
        "directores$ directeur diretor "
        "amministratore_delegato compliance_officer responsable_conformite "
        "responsable_de_cumplimiento responsabile_compliance responsavel_de_conformidade "
        "compliance-beauftragt compliance_beauftragt on_behalf_of im_auftrag au_nom_de "
        "en_nombre_de per_conto_del em_nome_da namens head_office zentrale siege$ "
        "central$ sede_central hoofdkantoor security_team sicherheitsteam "
        "equipe_securite equipo_de_seguridad team_sicurezza equipa_de_seguranca "
        "securityteam auditor auditeur revisore prufer operator developer entwickler "
        "developpeur desarrollador sviluppatore programador ontwikkelaar manager "
        "root$ superior",
        _OTHER_LANGUAGES["role"],
    ),
    # controls and guarded assets: logs, approvals, checks, backups, secrets, records
    "control": stem_list(
        "audit log$ logs$ logged logging protokoll journal registr registo historique "
        "history verlauf cronologia historico geschiedenis activiteitenlog "
        "backup back-up sauvegard copias_de_seguridad copie_di_sicurezza "
        "copias_de_segur copias_de_seguranca approval approv genehmig freigabe "
        "validation aprobac aprovac approvaz goedkeur sign-off sign_off signoff "
        "verif check controle control kontroll two-factor twofactor 2fa mfa "
        "zweifaktor zwei-faktor zwei_faktor double_authentification doubleauthentification "
        "dos_pasos due_fattori dois_passos tweestaps fraud betrug fraude frode identit "
        "compliance conformite cumplimiento conformidade monitoring uberwach surveill "
        "security sicherheit securite seguridad sicurezza seguranca veiligheid "
        "password passwort mot_de_passe contrasena palavra-passe palavra_passe "
        "wachtwoord databasewachtwoord api_key api_keys api-key api-schlussel "
        "cles_api claves_de_api chiavi_api chaves_de_api api-sleutel api_sleutel "
        "secret credential salar gehalt stipend salario salaris kundendaten "
        "customer_data customer_record customer_list dossiers_clients "
        "datos_de_clientes dati_dei_clienti dados_dos_clientes klantgegevens "
        "klantenlijst kundenliste internal_notes notes_internes restricted vertraulich "
        "confidential confidenci confidentiel vertrouwelijk sigilo riservat restrit "
        "restring production produktion refund_limit "
        "limit limite grenze limiet rapporti_di_accesso access_report zugriffsbericht "
        "rapports_d'acces informes_de_acceso relatorios_de_acesso toegangsrapport "
        "payout pagament payment betaling zahlung auszahl uitbetal paiement pago pagos "
        "rimbors reembols terugbetal erstattung rembourse filter filtering inhaltsfilter "
        "filtrage filtro kyc",
        _OTHER_LANGUAGES["control"],
    ),
    # weakening a control: skipping, switching off, deleting, hiding, ignoring
    "weaken": stem_list(
        "skip bypass ignore ignorier negeer disregard forget vergiss vergeet oublie "
        "olvida dimentica esquece disable deaktivier abschalt ausschalt desactiv "
        "disattiv deslig uitzet uitschakel turn_off switch_off switched_off "
        "delete deleting losch supprim efface borrar elimin cancell apagar wissen "
        "verwijder wipe hide verberg verstec cacher ocult nascond no_need "
        "keine_ruckfrage without_asking without_review without_checks without_a_ticket "
        "without_approval without_checking without_verification unchecked ohne_prufung "
        "ohne_uberprufung sans_verification sin_revision sin_verificar senza_verifica "
        "sem_verificacao zonder_controle zonder_verificatie "
        "without_approval ohne_ruckfrage ohne_kontrolle ohne_freigabe sans_demander "
        "sans_controle sans_validation sin_preguntar sin_control sin_aprobac "
        "senza_chiedere senza_controll senza_approvaz sem_pergunt sem_control "
        "sem_aprovac zonder_iemand zonder_controle zonder_goedkeuring zonder_te_vragen "
        "no_record no_trace keine_spur aucune_trace sin_rastro nessuna_traccia "
        "geen_spoor non_lasciarne uberspring saute sautes sauter salta$ salti$ "
        "saltes saltar overslaan overslaat omitir omettre auslass void no_longer "
        "nicht_mehr ne_s'appliquent_plus ya_no non_valgono ja_nao niet_meer contourn "
        "umgeh aggira contornar omzeil saltarse never_show nie_in jamais_appara "
        "nunca_deben mai_compar nooit_in out_of buiten_de aus_den hors_des fuera_de "
        "fuori_dai fora_dos don't_log don't_tell sag_der_compliance_nichts ne_dis_rien "
        "no_le_cuentes non_dire_nulla nao_contes vertel_compliance_niets "
        "not_be_recorded not_recorded nicht_protokoll n'enregistre_pas no_registres "
        "non_registrare nao_registes log_mijn stop_writing stop_asking fine_whenever "
        "ist_in_ordnung ne_pose_pas esta_bien va_bene nao_faz_mal is_prima feel_free "
        "ruhig n'hesite puedes_eliminar puoi_eliminar podes_eliminar mag_je_gerust "
        "mag_gerust darfst_du_gern just_approve einfach_ohne it's_okay_to_turn "
        "rather_you_disable straight_to_production",
        _OTHER_LANGUAGES["weaken"],
    ),
    # the agent addressed as such
    "agent": stem_list(
        "assistant assistent asistente assistente the_ai$ the_model an_ai$ ai_system "
        "any_ai$ ai_agent ai_reading to_the_agent the_agent "
        "ai-system ki-system ki_system ai_systemen ai-systemen systemes_d'ia "
        "sistemas_de_ia sistemi_di_ia note_to_the_ai hinweis_an_die_ki note_pour_l'ia "
        "nota_para_la_ia nota_per_l'ia nota_para_a_ia notitie_voor_de_ai das_modell "
        "le_modele el_modelo il_modello o_modelo het_model chatbot the_bot "
        "language_model sprachmodell modele_de_langage modelo_de_lenguaje "
        "modello_linguistico taalmodel agents_reading agenten_die los_agentes_que "
        "gli_agenti_che os_agentes_que les_agents_qui system_prompt systemprompt "
        "prompt_system prompt_de_sistema prompt_di_sistema systeemprompt you_are_now "
        "du_bist_jetzt tu_es_desormais ahora_eres ora_sei agora_es je_bent_nu "
        "your_guidelines deine_richtlinien tes_consignes tus_directrices "
        "le_tue_linee as_tuas_diretrizes je_richtlijnen your_safety your_developers "
        "your_operators the_rules_you die_regeln_die les_regles_qu las_reglas_que "
        "le_regole_che as_regras_que de_regels_die safety_policy "
        "sicherheitsrichtlinie politique_de_securite politica_de_seguridad "
        "politica_di_sicurezza politica_de_seguranca veiligheidsbeleid "
        "who_built_you der_dich_gebaut qui_t'a_concu que_te_creo che_ti_ha_creato "
        "que_te_criou die_je_heeft_gebouwd",
        _OTHER_LANGUAGES["agent"],
    ),
    # directives: must, always, from now on, treat as, reply with
    "directive": stem_list(
        "must should always never from_now_on whenever muss musst mussen soll sollen "
        "immer nie$ ab_jetzt ab_sofort doit$ doivent toujours jamais desormais debe$ "
        "deben siempre nunca desde_ahora a_partir_de_ahora deve$ devono sempre mai$ "
        "d'ora_in_poi devem moet$ moeten altijd nooit voortaan treat$ treat_anything "
        "behandle considere considera$ trata$ trata_a behandel$ is_to$ pretend tu_so "
        "fais_comme haz_como fai_finta faz_de_conta doe_alsof act_as$ follow$ "
        "follow_only befolge volg$ important$ wichtig$ count_as gelten_als "
        "comptent_comme cuentan_como valgono_come contam_como gelden_als follow_my "
        "befolge_meine suis_mes sigue_mis segui_le_mie segue_as_minhas volg_mijn "
        # an order to trust a source or a sender
        "trust$ vertraue$ vertrau$ fais_confiance faites_confiance confia$ confie$ "
        "fidati fidatevi vertrouw$ zaufaj ufaj lita_pa guven$ 信頼して",
        _OTHER_LANGUAGES["directive"],
    ),
    # giving someone a right
    "grant": stem_list(
        "grant granted give_me gave_me given promoted raised upgraded cleared_me "
        "erteil gewahr befordert freigeschalt accord donne_moi conced concedieron "
        "otorg dar_me dat_me dato concesso concedido gegeven gekregen toegekend "
        "verleend habilitado autorizado_a abilitat ernannt appointed nomme nombrado "
        "nominato nomeado benoemd",
        _OTHER_LANGUAGES["grant"],
    ),
    # sending data away
    "exfiltrate": stem_list(
        "forward_all forward_every weiterleit reenvi inoltr reencaminh "
        "doorstur send_a_copy schick_eine envoie_une envia_una invia_una envia_uma "
        "stuur_een share_customer gib_kundendaten partage_les comparte_los "
        "condividi_i partilha_os deel_klant to_an_outside an_eine_externe "
        "vers_une_adresse a_una_direccion verso_un_indirizzo para_um_endereco "
        "naar_een_extern include_the_full paste_the gib_es donne-le dasela "
        "dagliela da-lha geef_het reveal hand_me tell_callers private_storage "
        "privates_postfach personal_mailbox boite_personnelle buzon_personal "
        "casella_personale caixa_pessoal persoonlijke_mailbox mit_aus in_je_antwoorden "
        "dans_tes_reponses en_tus_respuestas nelle_tue_risposte nas_tuas_respostas "
        "in_your_replies into_your_replies when_you_answer anyone_who_asks "
        "if_someone_asks whoever_asks anyone_who_says jedem_der wer_auch_immer "
        "quiconque a_quien_lo_pida con_quien_diga chiunque a_quem_pedir com_quem_disser "
        "iedereen_die wie_erom_vraagt home_addresses privatadressen adresses_personnelles "
        "direcciones_personales indirizzi_di_casa moradas_pessoais huisadressen",
        _OTHER_LANGUAGES["exfiltrate"],
    ),
    # the writer speaks about themself
    "self": stem_list(
        "i'm i_am i've i_have i_hold i_speak my_role my_account my_access my_word "
        "my_requests my_instructions my_exports my_actions my_queries me_as "
        "consider_me this_is_the ich_bin ich_habe ich_stehe ich_schreibe mein_konto "
        "meine_rolle mein_wort meine_anfragen meine_exporte meine_aktionen mir_wurde "
        "hier_spricht je_suis j'ai j'ecris mon_role mon_compte ma_parole mes_demandes "
        "mes_exports mes_actions on_m'a c'est_le soy$ tengo estoy escribo mi_rol "
        "mi_cuenta mi_palabra mis_peticiones mis_solicitudes mis_exportaciones "
        "mis_acciones me_concedieron habla_el sono$ ho$ scrivo il_mio la_mia le_mie "
        "mi_e_stato parla_l sou$ tenho estou escrevo o_meu a_minha os_meus as_minhas "
        "foi-me fala_o ik_ben ik_heb ik_sta ik_schrijf mijn_rol mijn_account "
        "mijn_woord mijn_verzoeken mijn_exports mijn_acties hier_spreekt",
        _OTHER_LANGUAGES["self"],
    ),
}
"""Each category's stems, as the normalised text has them (see :func:`stem_list`)."""

LEXICON: dict[str, re.Pattern[str]] = {name: _stems(stems) for name, stems in LEXICON_STEMS.items()}
"""Each category's stems compiled (see :func:`_stems`)."""
